package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestStartWhileRedisIsDownOnEveryRouter: the reference server starts against a Redis
// that is down (killed), with -on-store-error local. It says it starts in the failure
// mode, and it does: every new client's first request is admitted by Local mode with
// the policy's whole burst less one, from the very first one. Before the start-up
// check's failure opened the breaker, the first clients were refused with 429s, as a
// slow call refuses a key no answer is known for, until their failures opened it.
func TestStartWhileRedisIsDownOnEveryRouter(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			redis := redistest.StartServer(t)
			if err := redis.Kill(); err != nil {
				t.Fatal(err)
			}
			srv := startServer(t, router, "-store", "redis", "-redis-addrs", redis.Addr, "-on-store-error", "local",
				"-algorithm", "token_bucket", "-limit", "10", "-period", "1m", "-burst", "20")
			if logs := srv.logs.String(); !strings.Contains(logs, "starting in the failure mode") {
				t.Fatalf("no warning that the server starts in the failure mode:\n%s", logs)
			}
			for i := range 6 {
				r := do(t, client(t, fmt.Sprintf("127.0.2.%d", i+1)), http.MethodGet, srv.url+"/api/resource", nil)
				if r.status != http.StatusOK || remainingOf(r.header.Get("RateLimit"), "api") != 19 {
					t.Fatalf("new client %d, Redis down since start: %d, RateLimit %q; want 200 with 19 left (Local mode)",
						i+1, r.status, r.header.Get("RateLimit"))
				}
			}
		})
	}
}
