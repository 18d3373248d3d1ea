package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// admittedAtOneInstant is how many requests of cost 1 a fresh key gets at one
// instant, from each algorithm's definition in DESIGN.md:
//   - token_bucket and gcra start full: burst;
//   - leaky_bucket queues a request when its slot lies at most burst×period/limit
//     ahead: slots 0, E, …, burst×E, so burst+1;
//   - fixed_window, sliding_log and sliding_window (with no previous window) admit
//     while the count plus the cost stays within the limit: limit.
func admittedAtOneInstant(alg core.Algorithm, limit, burst int64) int64 {
	switch alg {
	case core.TokenBucket, core.GCRA:
		return burst
	case core.LeakyBucket:
		return burst + 1
	}
	return limit
}

func TestBurstAgainstEachAlgorithm(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.FixedWindow, core.SlidingLog, core.SlidingWindow, core.LeakyBucket} {
				t.Run(string(alg), func(t *testing.T) { testBurst(t, router, alg) })
			}
		})
	}
}

func testBurst(t *testing.T, router string, alg core.Algorithm) {
	// Buckets: 100 per second with a burst of 6 (the leaky bucket's slots are 10ms
	// apart, so its queue waits at most 60ms). Windows: 6 per second.
	limit, burst := int64(6), int64(6)
	args := []string{"-algorithm", string(alg), "-limit", "6", "-period", "1s"}
	if alg == core.TokenBucket || alg == core.GCRA || alg == core.LeakyBucket {
		limit = 100
		args = []string{"-algorithm", string(alg), "-limit", "100", "-period", "1s", "-burst", "6"}
	}
	srv := startServer(t, router, args...)
	c := client(t, "127.0.0.1")
	want := admittedAtOneInstant(alg, limit, burst)
	admitted := int64(0)
	var refusal response
	for i := range want + 3 {
		r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil)
		switch r.status {
		case http.StatusOK:
			if admitted != i {
				t.Fatalf("request %d admitted after a refusal, with the clock standing still", i+1)
			}
			admitted++
		case http.StatusTooManyRequests:
			if refusal.status == 0 {
				refusal = r
			}
		default:
			t.Fatalf("request %d: status %d", i+1, r.status)
		}
	}
	if admitted != want {
		t.Fatalf("%s admitted %d of a burst at one instant, want %d", alg, admitted, want)
	}
	// The refusal carries the contract: the policy, r=0, Retry-After never before t.
	policy := refusal.header.Get("RateLimit-Policy")
	if !strings.HasPrefix(policy, `"api";q=`) {
		t.Errorf("RateLimit-Policy %q", policy)
	}
	rl := refusal.header.Get("RateLimit")
	tField := rl[strings.LastIndex(rl, ";t=")+3:]
	if !strings.HasPrefix(rl, `"api";r=0;t=`) && !(alg == core.LeakyBucket && strings.HasPrefix(rl, `"api";r=`)) {
		t.Errorf("RateLimit %q on a refusal", rl)
	}
	retryAfter, err1 := strconv.Atoi(refusal.header.Get("Retry-After"))
	reset, err2 := strconv.Atoi(tField)
	if err1 != nil || err2 != nil || retryAfter < 1 || retryAfter < reset {
		t.Errorf("Retry-After %q earlier than t=%q", refusal.header.Get("Retry-After"), tField)
	}
	if p := refusal.problem(t); p.Status != 429 || len(p.Violated) != 1 || p.Violated[0] != "api" || p.RetryAfter != retryAfter {
		t.Errorf("problem %+v", p)
	}
	// Time, not anything else, was the limit: once the policy has recovered (two
	// periods, for the sliding window's estimate) the key is admitted again.
	srv.clock.Advance(2 * time.Second)
	if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil); r.status != http.StatusOK {
		t.Errorf("after recovery: status %d, want 200", r.status)
	}
}

func TestWeightedRoute(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router, "-algorithm", "token_bucket", "-limit", "12", "-period", "1s")
			c := client(t, "127.0.0.1")
			steps := []struct {
				path      string
				status    int
				rateLimit string
			}{
				{"/api/report", 200, `"api";r=7;t=1`},
				{"/api/report", 200, `"api";r=2;t=1`},
				{"/api/report", 429, `"api";r=2;t=1`}, // 5 needed, 2 left: 3 tokens at 12/s take 250ms
				{"/api/resource", 200, `"api";r=1;t=1`},
				{"/api/resource", 200, `"api";r=0;t=1`},
				{"/api/resource", 429, `"api";r=0;t=1`},
			}
			for i, step := range steps {
				r := do(t, c, http.MethodGet, srv.url+step.path, nil)
				if r.status != step.status || r.header.Get("RateLimit") != step.rateLimit || r.header.Get("RateLimit-Policy") != `"api";q=12;w=1` {
					t.Fatalf("step %d %s: %d %q %q, want %d %q", i+1, step.path, r.status,
						r.header.Get("RateLimit"), r.header.Get("RateLimit-Policy"), step.status, step.rateLimit)
				}
			}
			// A report needs 5 tokens: at 12/s, 416ms earn 4.992 and 417ms 5.004.
			srv.clock.Advance(416 * time.Millisecond)
			if r := do(t, c, http.MethodGet, srv.url+"/api/report", nil); r.status != 429 || r.header.Get("RateLimit") != `"api";r=4;t=1` {
				t.Fatalf("report after 416ms: %d %q, want 429 with r=4", r.status, r.header.Get("RateLimit"))
			}
			srv.clock.Advance(time.Millisecond)
			if r := do(t, c, http.MethodGet, srv.url+"/api/report", nil); r.status != 200 || r.header.Get("RateLimit") != `"api";r=0;t=1` {
				t.Fatalf("report after 417ms: %d %q, want 200 with r=0", r.status, r.header.Get("RateLimit"))
			}
		})
	}
}
