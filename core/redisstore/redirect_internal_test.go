package redisstore

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// redisError is a reply error as go-redis returns one.
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

var _ redis.Error = redisError("")

// A MOVED or ASK left after go-redis's redirects is the Cluster unable to serve now;
// on a client of one server it is a client of one Cluster node, a deployment error
// that must fail loudly, not send every key to its failure mode.
func TestRedirectIsUnavailableOnlyOnACluster(t *testing.T) {
	reqs := []core.Request{{Policy: core.MustPolicy("api", core.GCRA, core.PerSecond(10)), Key: "k"}}
	for _, reply := range []string{"MOVED 4039 127.0.0.1:7001", "ASK 4039 127.0.0.1:7001"} {
		onCluster := wrapError(context.Background(), reqs, redisError(reply), true)
		if !errors.Is(onCluster, core.ErrStoreUnavailable) {
			t.Errorf("%s on a Cluster: %v, want it to wrap core.ErrStoreUnavailable", reply, onCluster)
		}
		alone := wrapError(context.Background(), reqs, redisError(reply), false)
		if !errors.Is(alone, ErrUnexpectedReply) || errors.Is(alone, core.ErrStoreUnavailable) {
			t.Errorf("%s on one server: %v, want ErrUnexpectedReply", reply, alone)
		}
	}
}
