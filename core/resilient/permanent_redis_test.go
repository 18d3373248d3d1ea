package resilient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A key of the wrong type (a string where the state should be) is a permanent error: returned in every mode,
// Open included, never admitted, logged at error level, and the breaker stays closed.
func TestRedisWrongTypeIsNeverAllowed(t *testing.T) {
	srv := redistest.StartServer(t)
	client := admin(t, srv)
	ctx := context.Background()
	for _, mode := range []resilient.Mode{resilient.Open, resilient.Closed, resilient.Local} {
		// A generous deadline: this is about the error, not the timing, and a first call
		// (dial and script load) on a loaded machine can outlast the usual one.
		r := newReplica(t, srv, resilient.WithMode(mode), resilient.WithDeadline(2*time.Second))
		key := "user:" + string(mode)
		if err := client.Set(ctx, r.redis.Key(tenPerMinute, key), "not a rate-limit state", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			res, err := r.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: key})
			if !errors.Is(err, resilient.ErrPermanent) || res.Allowed {
				t.Fatalf("%s: %+v %v, want an error wrapping ErrPermanent", mode, res, err)
			}
		}
		if r.store.Breaker() != resilient.BreakerClosed || r.store.Fallback("api") {
			t.Fatalf("%s: a permanent error tripped the breaker or the fallback", mode)
		}
		if log := r.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "unexpected reply") {
			t.Fatalf("%s: not logged at error level:\n%s", mode, log)
		}
		families := scrapeRegistry(t, r.registry)
		if v := metricValue(families, "ratelimit_store_errors_total", "store", "redis", "kind", "permanent"); v != 5 {
			t.Fatalf("%s: %v permanent errors counted, want 5", mode, v)
		}
		if v := metricValue(families, "ratelimit_decisions_total", "policy", "api", "result", "error"); v != 5 {
			t.Fatalf("%s: %v error decisions counted, want 5", mode, v)
		}
	}
}

// The start-up check fails loudly on a Redis that cannot run the scripts (here: the
// script commands are renamed away, as a locked-down or incompatible server would
// refuse them), reports an unreachable one as unavailable, and passes on a good one.
func TestRedisStartupCheck(t *testing.T) {
	ctx := context.Background()
	broken := redistest.StartServer(t, "--rename-command", "EVALSHA", "EVALSHA_DISABLED", "--rename-command", "EVAL", "EVAL_DISABLED")
	r := newReplica(t, broken)
	err := r.store.Check(ctx)
	if !errors.Is(err, resilient.ErrPermanent) || errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("Check on a Redis without EVAL: %v, want ErrPermanent", err)
	}
	if log := r.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(strings.ToLower(log), "unknown command") {
		t.Fatalf("not logged at error level:\n%s", log)
	}
	// Decisions on it are errors too, in Open mode: never a quiet "allowed".
	open := newReplica(t, broken, resilient.WithMode(resilient.Open))
	if res, err := open.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: "k"}); !errors.Is(err, resilient.ErrPermanent) || res.Allowed {
		t.Fatalf("a decision on a Redis without EVAL in open mode: %+v %v", res, err)
	}

	good := redistest.StartServer(t)
	g := newReplica(t, good)
	if err := g.store.Check(ctx); err != nil {
		t.Fatalf("Check on a good Redis: %v", err)
	}
	good.Kill()
	bounded, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.store.Check(bounded); !errors.Is(err, core.ErrStoreUnavailable) || errors.Is(err, resilient.ErrPermanent) {
		t.Fatalf("Check on a dead Redis: %v, want ErrStoreUnavailable", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("Check waited %v with a ctx of 300ms", waited)
	}
}
