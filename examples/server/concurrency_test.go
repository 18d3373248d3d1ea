package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestConcurrencyRoute(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			c := client(t, "127.0.0.1")

			// Two long exports in flight; their clients will go away.
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/api/export?ms=5000", nil)
					if resp, err := c.Do(req); err == nil {
						resp.Body.Close()
					}
				}()
				waitStarted(t, srv)
			}
			r := do(t, c, http.MethodGet, srv.url+"/api/export?ms=0", nil)
			if r.status != http.StatusTooManyRequests {
				t.Fatalf("third in flight: %d, want 429", r.status)
			}
			if r.header.Get("RateLimit") != `"export";r=0;t=1` || r.header.Get("RateLimit-Policy") != `"export";q=2;qu="concurrent-requests"` || r.header.Get("Retry-After") != "1" {
				t.Errorf("third in flight: RateLimit %q RateLimit-Policy %q Retry-After %q",
					r.header.Get("RateLimit"), r.header.Get("RateLimit-Policy"), r.header.Get("Retry-After"))
			}
			if p := r.problem(t); len(p.Violated) != 1 || p.Violated[0] != "export" {
				t.Errorf("problem %+v", p)
			}
			// Another client has its own two slots.
			other := client(t, "127.0.0.2")
			if r := do(t, other, http.MethodGet, srv.url+"/api/export?ms=0", nil); r.status != 200 {
				t.Fatalf("another client: %d, want 200", r.status)
			}
			waitStarted(t, srv)

			// The clients leave: the handlers stop, and their leases are released.
			cancel()
			wg.Wait()
			deadline := time.Now().Add(5 * time.Second)
			for {
				r := do(t, c, http.MethodGet, srv.url+"/api/export?ms=0", nil)
				if r.status == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the leases of cancelled exports were never released: %d", r.status)
				}
				time.Sleep(10 * time.Millisecond) // the server notices closed connections asynchronously
			}
			// And a finished export gives its slot back before its client has the answer.
			for range 3 {
				if r := do(t, c, http.MethodGet, srv.url+"/api/export?ms=1", nil); r.status != 200 || r.body != "exported in 1 ms\n" {
					t.Fatalf("sequential exports: %d %q", r.status, r.body)
				}
			}
			if r := do(t, c, http.MethodGet, srv.url+"/api/export?ms=x", nil); r.status != http.StatusBadRequest {
				t.Errorf("ms=x: %d, want 400", r.status)
			}
		})
	}
}

// waitStarted waits until an export has started its work.
func waitStarted(t *testing.T, srv *testServer) {
	t.Helper()
	select {
	case <-srv.started:
	case <-time.After(5 * time.Second):
		t.Fatal("no export started")
	}
}
