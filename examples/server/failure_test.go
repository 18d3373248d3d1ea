package main

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// The server on a real Redis that hangs (SIGSTOP): -on-store-error open admits
// everything, closed answers 503 with Retry-After, local enforces the policy in
// process; /metrics shows the fallback; and everything recovers when Redis resumes.
func TestStoreFailureModesOnAHungRedis(t *testing.T) {
	for _, mode := range []string{"open", "closed", "local"} {
		t.Run(mode, func(t *testing.T) {
			redis := redistest.StartServer(t)
			srv := startServer(t, "chi", "-store", "redis", "-redis-addrs", redis.Addr, "-on-store-error", mode,
				"-algorithm", "sliding_log", "-limit", "5", "-period", "1m")
			c := client(t, "127.0.0.1")
			get := func(int) response { return do(t, c, http.MethodGet, srv.url+"/api/resource", nil) }
			first := get(0)
			if first.status != http.StatusOK {
				t.Fatalf("with Redis up: %d %s", first.status, first.body)
			}
			// What Redis's answer left: the last shared answer Local mode continues from.
			m := remainingRe.FindStringSubmatch(first.header.Get("RateLimit"))
			if m == nil {
				t.Fatalf("RateLimit %q on the first answer: no remaining", first.header.Get("RateLimit"))
			}
			left, err := strconv.Atoi(m[1])
			if err != nil || left != 4 {
				t.Fatalf("RateLimit %q on the first answer: want 4 of 5 left", first.header.Get("RateLimit"))
			}
			if err := redis.Pause(); err != nil {
				t.Fatal(err)
			}
			defer redis.Resume()
			statuses := map[int]int{}
			var retryAfter string
			count := func(r response) {
				statuses[r.status]++
				if r.status == http.StatusServiceUnavailable {
					retryAfter = r.header.Get("Retry-After")
				}
			}
			for i := 0; i < 12; i++ {
				count(get(i))
			}
			// The breaker opens once the failure rate over its window is reached (at least
			// 10 calls, 3 failures, half of them failed) and a confirming probe times out
			// (1s); the policy enters its failure mode at the first decision after that.
			// Until then failing calls are decided as slow ones, by the same rule for each
			// mode. Poll, with requests, counted like the others.
			fallback := `ratelimit_fallback_active{policy="api"} 1`
			var metrics string
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if metrics = do(t, c, http.MethodGet, srv.url+"/metrics", nil).body; strings.Contains(metrics, fallback) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("metrics do not show the fallback within 10s:\n%s", grepLines(metrics, "fallback"))
				}
				count(get(0))
			}
			total := 0
			for _, n := range statuses {
				total += n
			}
			switch mode {
			case "open":
				if statuses[http.StatusOK] != total {
					t.Fatalf("open mode: %v, want all %d admitted", statuses, total)
				}
			case "closed":
				if statuses[http.StatusServiceUnavailable] != total || retryAfter == "" {
					t.Fatalf("closed mode: %v Retry-After %q, want %d × 503 with Retry-After", statuses, retryAfter, total)
				}
			case "local":
				// Redis admitted 1 of the policy's 5 before it hung and said 4 were left.
				// Failing calls while the breaker is still closed are decided from that
				// answer, without refill, and once it is open Local mode continues the key
				// from it, scaled to the replica's share (the server runs as 1 replica, so
				// 4 × 5/5): 4 admitted in all, never a fresh bucket of 5; every other
				// request is refused.
				const limit, replicas = 5, 1 // -limit 5; the server sets no WithReplicas
				want := left * (limit / replicas) / limit
				if statuses[http.StatusOK] != want || statuses[http.StatusTooManyRequests] != total-want {
					t.Fatalf("local mode: %v, want %d admitted and %d refused", statuses, want, total-want)
				}
			}
			if err := redis.Resume(); err != nil {
				t.Fatal(err)
			}
			// Back to shared enforcement once two background probes in a row, a cooldown
			// apart on the server's virtual clock, find Redis answering again: each poll
			// moves the clock on by one cooldown (250ms; well inside the policy's minute).
			recovered := `ratelimit_fallback_active{policy="api"} 0`
			var r response
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				srv.clock.Advance(resilient.DefaultCooldown)
				r = get(0)
				if strings.Contains(do(t, c, http.MethodGet, srv.url+"/metrics", nil).body, recovered) {
					break
				}
			}
			if !strings.Contains(do(t, c, http.MethodGet, srv.url+"/metrics", nil).body, recovered) {
				t.Fatalf("the fallback did not end within 5s of Redis resuming (last answer %d)", r.status)
			}
			// Redis enforces again: it admitted 1 before the hang and at most 4 more now.
			for i := 0; i < 6; i++ {
				r = get(i)
			}
			if r.status != http.StatusTooManyRequests {
				t.Fatalf("after recovery the shared limit is not enforced: %d", r.status)
			}
		})
	}
}

// remainingRe finds the remaining quota (r=) in a RateLimit header.
var remainingRe = regexp.MustCompile(`;r=(\d+)`)

func grepLines(s, substr string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
