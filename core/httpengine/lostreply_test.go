package httpengine_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
)

// lostReply decides every request, and loses the reply of those that ask for a
// concurrency lease, as a Redis store does when the request's deadline fires after
// the script ran: the store holds the lease, the caller sees an error.
type lostReply struct{ *memory.Store }

func asksLease(reqs []core.Request) bool {
	for i := range reqs {
		if reqs[i].Lease != 0 {
			return true
		}
	}
	return false
}

func (s lostReply) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	res, err := s.Store.Decide(ctx, req)
	if err == nil && req.Lease != 0 {
		return core.Result{}, fmt.Errorf("redis: %w", context.DeadlineExceeded)
	}
	return res, err
}

func (s lostReply) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	allowed, err := s.Store.DecideStack(ctx, reqs, results)
	if err == nil && asksLease(reqs) {
		return false, fmt.Errorf("redis: %w", context.DeadlineExceeded)
	}
	return allowed, err
}

// A decision whose reply was lost is a 503, and the leases it asked for are
// released: the store may hold them, and no request would. Before, each such
// failure held a slot for the whole lease timeout: after two, the key was refused
// for a minute with nothing in flight. Alone, in a stack, and merged into an
// app-wide Limiter's decision.
func TestLeaseOfALostReplyIsReleased(t *testing.T) {
	export := core.MustConcurrencyPolicy("export", 2, time.Minute)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	for _, tc := range []struct {
		name  string
		serve func(store core.Store) int
	}{
		{"alone", func(store core.Store) int {
			return serve(httpengine.Must(store, httpengine.Limit(export, headerKey)), request("192.0.2.1:1", "X-Key", "a"), ok).Code
		}},
		{"stacked", func(store core.Store) int {
			l := httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, headerKey), httpengine.Limit(export, headerKey)))
			return serve(l, request("192.0.2.1:1", "X-Key", "a"), ok).Code
		}},
		{"merged", func(store core.Store) int {
			outer := httpengine.Must(store, httpengine.Limit(api, headerKey))
			inner := httpengine.Must(store, httpengine.Limit(export, headerKey))
			code := 0
			serve(outer, request("192.0.2.1:1", "X-Key", "a"), func(_ http.ResponseWriter, r *http.Request) {
				code = serve(inner, r, ok).Code
			})
			return code
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			for range 2 {
				if code := tc.serve(lostReply{store}); code != http.StatusServiceUnavailable {
					t.Fatalf("lost reply: %d, want 503", code)
				}
			}
			healthy := httpengine.Must(store, httpengine.Limit(export, headerKey))
			if w := serve(healthy, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != http.StatusOK {
				t.Fatalf("nothing in flight, the store answering again: %d %q, want 200 (slots held by leases no request holds)",
					w.Code, w.Header().Get("RateLimit"))
			}
		})
	}
}
