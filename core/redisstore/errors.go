package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("redisstore: store closed")

// ErrUnexpectedReply is wrapped by errors where Redis answered, but not as the scripts
// expect: a key of another type under the store's prefix (WRONGTYPE), keys of one call
// in different Cluster slots (CROSSSLOT), a state the scripts did not write, or a reply
// of the wrong shape. Such a decision is an error, never a silent "allowed".
var ErrUnexpectedReply = errors.New("redisstore: unexpected reply")

// unavailablePrefixes are Redis error replies that mean the server cannot serve now
// (loading its data, a read-only replica after a failover, a cluster without quorum, …).
var unavailablePrefixes = []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY", "MISCONF", "OOM", "NOREPLICAS"}

// wrapError names the policies of a failed call and classifies the failure: a
// cancelled or expired ctx is returned as such; an unreachable or unready server wraps
// core.ErrStoreUnavailable; anything else wraps ErrUnexpectedReply. On a Cluster
// (onCluster), a MOVED or ASK reply reaches the store only when go-redis has followed
// its redirects and the masters still disagree on who serves the slot, as while a
// resharding or a failover's configuration spreads: the server cannot serve now
// (TestRedisClusterRedirectLoopIsUnavailable). Elsewhere it is a client of one
// Cluster node, a deployment error that must fail loudly.
func wrapError(ctx context.Context, reqs []core.Request, err error, onCluster bool) error {
	names := policyNames(reqs)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("redisstore: %s: %w", names, ctxErr)
	}
	if unavailable(err) || onCluster && (redis.HasErrorPrefix(err, "MOVED ") || redis.HasErrorPrefix(err, "ASK ")) {
		return fmt.Errorf("%s: %w: %w", names, core.ErrStoreUnavailable, err)
	}
	return fmt.Errorf("%s: %w: %w", names, ErrUnexpectedReply, err)
}

// failed is wrapError for a call of s that failed, and on a Cluster it has the client
// reload which master serves which slots when the failure may be a master gone (the
// server unavailable, or a deadline that expired on a stuck master). go-redis reloads
// them on MOVED, ASK and READONLY replies, and otherwise only every
// ClusterStateReloadInterval (60s by default): after a master failed over, its slots'
// decisions went to the dead address for that long (TestClusterFailoverReaches-
// ThePromotedReplica fails without this). go-redis runs the reload in the
// background, one at a time; a reload that failed (every node down) does not hold
// the next back, so the store asks at most once per reloadEvery.
func (s *Store) failed(ctx context.Context, reqs []core.Request, err error) error {
	wrapped := wrapError(ctx, reqs, err, s.cluster != nil)
	if s.cluster != nil && (errors.Is(wrapped, core.ErrStoreUnavailable) || errors.Is(wrapped, context.DeadlineExceeded)) {
		now, last := time.Now().UnixNano(), s.reloadedAt.Load()
		if now-last >= int64(reloadEvery) && s.reloadedAt.CompareAndSwap(last, now) {
			s.cluster.ReloadState(context.Background())
		}
	}
	return wrapped
}

// reloadEvery is the least time between two reloads of a Cluster's slots that failed
// calls ask for (see Store.failed).
const reloadEvery = 100 * time.Millisecond

// unavailable reports whether err means the server cannot serve now.
func unavailable(err error) bool {
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrPoolExhausted) ||
		errors.Is(err, net.ErrClosed) || err.Error() == "redis: cluster has no nodes" {
		return true
	}
	for _, prefix := range unavailablePrefixes {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}

// unexpectedReply names the policies of a call whose reply did not parse (err says
// how) and wraps ErrUnexpectedReply.
func unexpectedReply(reqs []core.Request, err error) error {
	return fmt.Errorf("%s: %w: %w", policyNames(reqs), ErrUnexpectedReply, err)
}

// policyNames names the policies of a call for an error message: `policy "api"` or
// `policies "login-account", "login-ip"`.
func policyNames(reqs []core.Request) string {
	if len(reqs) == 1 {
		return fmt.Sprintf("policy %q", reqs[0].Policy.Name())
	}
	quoted := make([]string, len(reqs))
	for i := range reqs {
		quoted[i] = fmt.Sprintf("%q", reqs[i].Policy.Name())
	}
	return "policies " + strings.Join(quoted, ", ")
}
