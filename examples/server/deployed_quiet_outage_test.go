package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestQuietServiceOutageOnEveryRouter: a service whose traffic is too light for the
// breaker's failure rate (fewer than 10 calls a second) loses its standalone Redis
// (SIGKILL), then gets it back empty. DESIGN.md's local mode must still take over:
//
//   - new clients, one request each every 250 ms (4 calls a second), are refused
//     only until the breaker confirms the outage (3 failures in a row and a probe),
//     then admitted by Local mode, every one of them, for the rest of the outage;
//   - a client Redis had answered for continues from its last shared answer,
//     not from a fresh bucket: at most that answer's remaining plus what the
//     policy refills since (1 token every 6 s) is admitted;
//   - once Redis is back, new clients are decided by Redis again;
//   - no answer is anything but 200 or 429.
func TestQuietServiceOutageOnEveryRouter(t *testing.T) {
	const (
		spacing = 250 * time.Millisecond
		// The 3 failures in a row: the third asks for a confirming probe, which a
		// dead server fails at once, so every new client after them is admitted.
		maxRefusedBeforeLocal = 3
		newClients            = 12
	)
	// A slow refill, so that a fresh bucket (20) and the last shared answer's
	// remaining plus its refill (2 or 3) are far apart.
	args := []string{"-on-store-error", "local", "-algorithm", "token_bucket", "-limit", "10", "-period", "1m", "-burst", "20"}
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			redis := redistest.StartServer(t)
			srv := startServer(t, router, append([]string{"-store", "redis", "-redis-addrs", redis.Addr}, args...)...)
			followWallClock(t, srv.clock)

			known := client(t, "127.0.0.20")
			var left int64 = -1
			for i := 0; i < 18; i++ {
				r := do(t, known, http.MethodGet, srv.url+"/api/resource", nil)
				if r.status != http.StatusOK {
					t.Fatalf("with Redis up, request %d of the known client: %d %s", i, r.status, r.body)
				}
				left = remainingOf(r.header.Get("RateLimit"), "api")
			}
			lastShared := time.Now()
			if left <= 0 {
				t.Fatalf("the known client's last shared answer shows %d remaining, want some left", left)
			}
			// Past the breaker's window (1 s), the service is quiet: the 18 calls
			// just made would otherwise hold the window above its 10 calls, where
			// failures open the breaker by rate (half of the calls), not in a row.
			time.Sleep(1100 * time.Millisecond)

			if err := redis.Kill(); err != nil {
				t.Fatal(err)
			}
			statuses := make([]int, newClients)
			for i := range statuses {
				if i > 0 {
					time.Sleep(spacing)
				}
				c := client(t, fmt.Sprintf("127.0.1.%d", i+1))
				statuses[i] = do(t, c, http.MethodGet, srv.url+"/api/resource", nil).status
			}
			t.Logf("%s: new clients during the outage, %v apart: %v", router, spacing, statuses)
			firstAdmitted := -1
			for i, status := range statuses {
				switch {
				case status != http.StatusOK && status != http.StatusTooManyRequests:
					t.Errorf("new client %d during the outage: %d, want 200 or 429", i, status)
				case status == http.StatusOK && firstAdmitted < 0:
					firstAdmitted = i
				case status != http.StatusOK && firstAdmitted >= 0:
					t.Errorf("new client %d during the outage: %d after Local mode took over at client %d", i, status, firstAdmitted)
				}
			}
			if firstAdmitted < 0 || firstAdmitted > maxRefusedBeforeLocal {
				t.Errorf("the first new client admitted during the outage was number %d, want at most %d refused before Local mode takes over", firstAdmitted, maxRefusedBeforeLocal)
			}

			var admitted, refused int64
			for i := 0; i < 20; i++ {
				switch r := do(t, known, http.MethodGet, srv.url+"/api/resource", nil); r.status {
				case http.StatusOK:
					admitted++
				case http.StatusTooManyRequests:
					refused++
				default:
					t.Errorf("known client during the outage: %d %s", r.status, r.body)
				}
			}
			since := time.Since(lastShared)
			bound := left + int64(since/(6*time.Second)) + 1
			t.Logf("%s: the known client, %d left in its last shared answer %v before: %d admitted (bound %d), %d refused during the outage",
				router, left, since.Round(time.Millisecond), admitted, bound, refused)
			if admitted > bound {
				t.Errorf("the known client had %d left in its last shared answer %v before, and was admitted %d times during the outage, bound %d: Local mode gave it a fresh bucket",
					left, since.Round(time.Millisecond), admitted, bound)
			}
			if admitted == 0 {
				t.Errorf("the known client was admitted nothing during the outage, want up to the %d left in its last shared answer", left)
			}

			if err := redis.Restart(); err != nil {
				t.Fatal(err)
			}
			rc := redis.NewClient()
			defer rc.Close()
			const returning = "127.0.2.1"
			counts := &phaseCounts{}
			if !decidedByRedisAgain(t, srv, rc, apiStateKey(srv, "ip:"+returning), returning, counts, time.Now().Add(5*time.Second)) {
				t.Errorf("a new client is not decided by Redis within 5 s of its restart")
			}
			if n := counts.other[0].Load(); n != 0 {
				t.Errorf("after the restart: %d answers neither 200 nor 429%s", n, counts)
			}
		})
	}
}
