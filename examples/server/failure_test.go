package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
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
			if r := get(0); r.status != http.StatusOK {
				t.Fatalf("with Redis up: %d %s", r.status, r.body)
			}
			if err := redis.Pause(); err != nil {
				t.Fatal(err)
			}
			defer redis.Resume()
			statuses := map[int]int{}
			var retryAfter string
			for i := 0; i < 12; i++ {
				r := get(i)
				statuses[r.status]++
				if r.status == http.StatusServiceUnavailable {
					retryAfter = r.header.Get("Retry-After")
				}
			}
			switch mode {
			case "open":
				if statuses[http.StatusOK] != 12 {
					t.Fatalf("open mode: %v, want all 12 admitted", statuses)
				}
			case "closed":
				if statuses[http.StatusServiceUnavailable] != 12 || retryAfter == "" {
					t.Fatalf("closed mode: %v Retry-After %q, want 12 × 503 with Retry-After", statuses, retryAfter)
				}
			case "local":
				// One was admitted by Redis before it hung; the local store does not know
				// it, so it admits the policy's full 5 once more, then refuses.
				if statuses[http.StatusOK] != 5 || statuses[http.StatusTooManyRequests] != 7 {
					t.Fatalf("local mode: %v, want 5 admitted and 7 refused", statuses)
				}
			}
			metrics := do(t, c, http.MethodGet, srv.url+"/metrics", nil).body
			if !strings.Contains(metrics, `ratelimit_fallback_active{policy="api"} 1`) {
				t.Errorf("metrics do not show the fallback:\n%s", grepLines(metrics, "fallback"))
			}
			if err := redis.Resume(); err != nil {
				t.Fatal(err)
			}
			// Back to shared enforcement once the breaker's cooldown (on the server's
			// virtual clock) has passed and its probe finds Redis answering again.
			srv.clock.Advance(2 * time.Second)
			recovered := `ratelimit_fallback_active{policy="api"} 0`
			var r response
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
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

func grepLines(s, substr string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
