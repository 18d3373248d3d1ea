package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// tenPerMinute is the fault tests' policy: small enough that a test sees Local mode
// enforce it, slow enough that it does not refill during a test.
var tenPerMinute = core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))

// faultLatencyMargin is what a decision may take beyond the deadline, at the 99th
// percentile, on a loaded machine under the race detector. It is a bound, not a benchmark.
const faultLatencyMargin = 100 * time.Millisecond

// tally counts what a fault scenario's decisions amounted to.
type tally struct {
	admitted, unenforced, refused, unavailable, other atomic.Int64
	firstOther                                        atomic.Value
	// unenforcedRemaining counts the unenforced results by the Remaining they report.
	unenforcedRemaining sync.Map // int64 -> *atomic.Int64
}

// reported renders unenforcedRemaining: "remaining 3: 41 results".
func (tl *tally) reported() string {
	var parts []string
	tl.unenforcedRemaining.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("remaining %d: %d results", k, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// hammer makes decisions on key from workers goroutines for d, each pausing a few
// milliseconds between decisions, and records their latencies.
func hammer(store *resilient.Store, key string, workers int, d time.Duration, lat *latencies, tl *tally) {
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				start := time.Now()
				res, err := store.Decide(context.Background(), core.Request{Policy: tenPerMinute, Key: key})
				lat.add(time.Since(start))
				var unavailable *resilient.UnavailableError
				switch {
				case errors.As(err, &unavailable) && errors.Is(err, core.ErrStoreUnavailable):
					tl.unavailable.Add(1)
				case err != nil:
					tl.other.Add(1)
					tl.firstOther.CompareAndSwap(nil, err.Error())
				case res.Allowed && res.Unenforced:
					tl.unenforced.Add(1)
					n, _ := tl.unenforcedRemaining.LoadOrStore(res.Remaining, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				case res.Allowed:
					tl.admitted.Add(1)
				default:
					tl.refused.Add(1)
				}
				time.Sleep(3 * time.Millisecond) // pacing, so the scenario spans breaker probes
			}
		}()
	}
	wg.Wait()
}

// A hung Redis (SIGSTOP) and a dead one (SIGKILL), once the breaker has opened, in
// each failure mode, on a key whose last Redis answer left 3 of 10: Open admits
// everything unenforced and reports those 3 left, not a fresh bucket; Closed refuses
// everything as unavailable (503); Local continues from the 3 in process; and the 99th
// percentile of decision latency stays under the deadline plus a margin.
func TestRedisFaultModes(t *testing.T) {
	for _, f := range faults {
		for _, mode := range []resilient.Mode{resilient.Open, resilient.Closed, resilient.Local} {
			t.Run(f.name+"/"+string(mode), func(t *testing.T) {
				srv := redistest.StartServer(t)
				r := newReplica(t, srv, resilient.WithMode(mode))
				if err := r.store.Check(context.Background()); err != nil {
					t.Fatalf("start-up check on a healthy server: %v", err)
				}
				const key, spent = "ip:198.51.100.7", 7
				for i := 0; i < spent; i++ {
					res, err := r.store.Decide(context.Background(), core.Request{Policy: tenPerMinute, Key: key})
					if err != nil || !res.Allowed || res.Unenforced {
						t.Fatalf("decision %d on a healthy server: %+v, %v", i+1, res, err)
					}
				}
				if err := f.inject(srv); err != nil {
					t.Fatal(err)
				}
				req := core.Request{Policy: tenPerMinute, Key: key}
				openBreakerFor(t, r.store, req) // the outage is established
				var lat latencies
				var tl tally
				hammer(r.store, key, 4, 700*time.Millisecond, &lat, &tl)
				total := tl.admitted.Load() + tl.unenforced.Load() + tl.refused.Load() + tl.unavailable.Load() + tl.other.Load()
				summary := fmt.Sprintf("%d decisions: %d admitted, %d unenforced, %d refused, %d unavailable, %d other (%v)",
					total, tl.admitted.Load(), tl.unenforced.Load(), tl.refused.Load(), tl.unavailable.Load(), tl.other.Load(), tl.firstOther.Load())
				if tl.other.Load() != 0 || total < 50 {
					t.Fatal(summary)
				}
				switch mode {
				case resilient.Open:
					if tl.unenforced.Load() != total {
						t.Fatalf("open mode must admit everything unenforced: %s", summary)
					}
					// Redis's last answer left 10 − 7; a fresh bucket would report 9.
					if got := tl.reported(); got != fmt.Sprintf("remaining 3: %d results", total) {
						t.Fatalf("open mode must report the last answer's 3 left, reported %s", got)
					}
				case resilient.Closed:
					if tl.unavailable.Load() != total {
						t.Fatalf("closed mode must refuse everything as unavailable: %s", summary)
					}
				case resilient.Local:
					// 10 a minute, 7 spent on Redis: the 3 left, and a token every 6s,
					// which the seconds since the last answer earn at most once.
					if a := tl.admitted.Load(); a < 10-spent || a > 11-spent || tl.admitted.Load()+tl.refused.Load() != total {
						t.Fatalf("local mode must continue from the 3 left: %s", summary)
					}
				}
				p99, most, n := lat.p99()
				t.Logf("%s; latency p99 %v, max %v over %d decisions", summary, p99, most, n)
				if p99 > faultDeadline+faultLatencyMargin {
					t.Fatalf("p99 latency %v exceeds the deadline %v plus %v", p99, faultDeadline, faultLatencyMargin)
				}
				// No decision waits for a client timeout (go-redis reads time out after 3s)
				// or a dial retry loop: the slowest is about one deadline.
				if most > faultDeadline+time.Second {
					t.Fatalf("the slowest decision took %v, with a deadline of %v", most, faultDeadline)
				}
				if !r.store.Fallback("api") || r.store.BreakerFor(req) == resilient.BreakerClosed {
					t.Fatalf("fallback %v, breaker %v during the outage", r.store.Fallback("api"), r.store.BreakerFor(req))
				}
				families := scrapeRegistry(t, r.registry)
				if v := metricValue(families, "ratelimit_fallback_active", "policy", "api"); v != 1 {
					t.Fatalf("ratelimit_fallback_active{api} = %v during the outage", v)
				}
				// A refused connection surfaces as unavailable, or as a timeout when the
				// client's dial retries (go-redis: DialerRetries, 100ms apart) outlast the
				// deadline; a paused server always times out.
				errs := metricValue(families, "ratelimit_store_errors_total", "store", "redis", "kind", "timeout")
				if f.name == "dead" {
					errs = max(errs, 0) + max(metricValue(families, "ratelimit_store_errors_total", "store", "redis", "kind", "unavailable"), 0)
				}
				if errs < 3 {
					t.Fatalf("%v store errors counted, want at least the 3 that opened the breaker: %v", errs, families["ratelimit_store_errors_total"])
				}
			})
		}
	}
}

// When Redis comes back on the same port, two replicas in Local mode return to
// shared enforcement on their own within a few seconds: they share one limit again,
// and the fallback gauge is back to 0.
func TestRedisRecoveryTwoReplicas(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := redistest.StartServer(t)
			a := newReplica(t, srv, resilient.WithReplicas(2))
			b := newReplica(t, srv, resilient.WithReplicas(2))
			ctx := context.Background()
			for _, r := range []*replica{a, b} {
				if err := r.store.Check(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.inject(srv); err != nil {
				t.Fatal(err)
			}
			openBreaker(t, a.store)
			openBreaker(t, b.store)
			// Degraded: each replica enforces half of the limit on its own.
			admitted := 0
			for i := 0; i < 20; i++ {
				for _, r := range []*replica{a, b} {
					if res, err := r.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: "ip:203.0.113.9"}); err == nil && res.Allowed {
						admitted++
					}
				}
			}
			if admitted != 10 {
				t.Fatalf("two replicas in local mode with WithReplicas(2) admitted %d, want 5 each", admitted)
			}
			downFor := time.Now()
			if err := f.recover(srv); err != nil {
				t.Fatal(err)
			}
			// Traffic brings both back: the breaker probes after its cooldown.
			deadline := time.Now().Add(5 * time.Second)
			for a.store.Breaker() != resilient.BreakerClosed || b.store.Breaker() != resilient.BreakerClosed || a.store.Fallback("api") || b.store.Fallback("api") {
				if time.Now().After(deadline) {
					t.Fatalf("not back within 5s: breakers %v %v", a.store.Breaker(), b.store.Breaker())
				}
				for _, r := range []*replica{a, b} {
					r.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: "ip:192.0.2.200"})
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("both replicas back on the shared store %v after the server returned", time.Since(downFor).Round(time.Millisecond))
			// A return the prober found is logged and reported after the fallback has ended.
			waitFor(t, "the returns reported", func() bool {
				for _, r := range []*replica{a, b} {
					if metricValue(scrapeRegistry(t, r.registry), "ratelimit_fallback_transitions_total", "policy", "api", "to", "shared") < 1 {
						return false
					}
				}
				return true
			})
			// One shared limit again: 10 in all, however the requests are spread.
			admitted = 0
			for i := 0; i < 15; i++ {
				for _, r := range []*replica{a, b} {
					res, err := r.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: "ip:203.0.113.10"})
					if err != nil {
						t.Fatal(err)
					}
					if res.Allowed {
						admitted++
					}
					if res.Unenforced {
						t.Fatalf("unenforced after recovery: %+v", res)
					}
				}
			}
			if admitted != 10 {
				t.Fatalf("after recovery two replicas admitted %d, want the shared limit, 10", admitted)
			}
			for name, r := range map[string]*replica{"a": a, "b": b} {
				families := scrapeRegistry(t, r.registry)
				if v := metricValue(families, "ratelimit_fallback_active", "policy", "api"); v != 0 {
					t.Errorf("replica %s: ratelimit_fallback_active{api} = %v after recovery", name, v)
				}
				if v := metricValue(families, "ratelimit_fallback_transitions_total", "policy", "api", "to", "shared"); v != 1 {
					t.Errorf("replica %s: %v transitions back to shared, want 1", name, v)
				}
				if v := metricValue(families, "ratelimit_fallback_transitions_total", "policy", "api", "to", "local"); v != 1 {
					t.Errorf("replica %s: %v transitions to local, want 1", name, v)
				}
				log := r.log.String()
				if !containsAll(log, "level=WARN", "falls back to local mode", "back on the shared store after", "shared store back after") {
					t.Errorf("replica %s: transitions not logged at warn:\n%s", name, log)
				}
			}
		})
	}
}
