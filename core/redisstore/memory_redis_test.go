package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestStateMemoryPerKey measures what a client's state costs Redis, the figure
// docs/redis.md sizes a deployment by ("about 200 bytes"): used_memory grown by
// 5,000 keys of short client keys, per algorithm, on a real redis-server. Periods
// are long, so no key expires while it runs.
func TestStateMemoryPerKey(t *testing.T) {
	const keys, bound = 5000, 256
	srv := redistest.StartServer(t)
	s := storeOnServer(t, srv)
	client := srv.NewClient()
	defer client.Close()
	ctx := context.Background()
	for _, p := range []core.Policy{
		core.MustPolicy("api", core.TokenBucket, core.PerHour(100)),
		core.MustPolicy("api", core.GCRA, core.PerHour(100)),
		core.MustPolicy("api", core.FixedWindow, core.PerHour(100)),
		core.MustPolicy("api", core.SlidingWindow, core.PerHour(100)),
		core.MustPolicy("api", core.SlidingLog, core.PerHour(10)),
	} {
		if err := client.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		// The first decision loads the script, which is not the keys' memory.
		if _, err := s.Decide(ctx, core.Request{Policy: p, Key: "warm-up"}); err != nil {
			t.Fatal(err)
		}
		before := usedMemory(t, client.Info(ctx, "memory").Val())
		for i := range keys {
			if _, err := s.Decide(ctx, core.Request{Policy: p, Key: fmt.Sprintf("ip:203.0.113.%d#%d", i%256, i)}); err != nil {
				t.Fatal(err)
			}
		}
		perKey := (usedMemory(t, client.Info(ctx, "memory").Val()) - before) / keys
		t.Logf("%s: %d bytes per key (%q)", p.Algorithm(), perKey, s.Key(p, "ip:203.0.113.1#1"))
		if perKey > bound {
			t.Errorf("%s: %d bytes of Redis memory per key, over the %d docs/redis.md sizes by", p.Algorithm(), perKey, bound)
		}
	}
}

// usedMemory reads used_memory from the reply of INFO memory.
func usedMemory(t *testing.T, info string) int64 {
	t.Helper()
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("used_memory %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("no used_memory in INFO memory:\n%s", info)
	return 0
}
