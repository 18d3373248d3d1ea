package resilient_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// Through the HTTP engine, in Closed mode with the breaker open, no acquire is ever
// sent: a refused request leaves no lease to release on the shared store. When the
// engine released every failed decision's leases, each refusal of the outage was
// queued as an ended shared lease, crowding out real ones after the recovery.
func TestClosedRefusalsOverHTTPQueueNoLeaseRelease(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Closed))
	r.store.ReleasePassesByHand()
	r.trip(t, uploads)
	key := func(*http.Request) (string, error) { return "k", nil }
	l := httpengine.Must(r.store, httpengine.Limit(uploads, key), httpengine.WithLogger(slog.New(slog.DiscardHandler)))
	for range 50 {
		w := httptest.NewRecorder()
		tk := l.Start(httptest.NewRequest(http.MethodGet, "/", nil), w.Header())
		if tk.Disposition() != httpengine.Failed {
			t.Fatalf("Closed mode, breaker open: %v; want Failed", tk.Disposition())
		}
		tk.Finish(0, false)
	}
	if n := r.store.EndedLeases(); n != 0 {
		t.Errorf("after 50 requests refused in Closed mode with the breaker open, the book holds %d ended leases; want 0 (none was ever sent)", n)
	}
}

// Closed mode, breaker still closed, the shared store failing: the failed decision
// queues its lease once (acquiresUnsure) and makes one call: when the engine also
// released it, that was a second, synchronous call to the
// failing store (under the deadline, on the request's path, counted by the
// breakers and the store-call metrics), and queues the lease a second time.
func TestFailedDecisionOverHTTPMakesOneCall(t *testing.T) {
	r := newRig(t, neverOpen, resilient.WithMode(resilient.Closed))
	r.store.ReleasePassesByHand()
	r.shared.fail(errDown)
	key := func(*http.Request) (string, error) { return "k", nil }
	l := httpengine.Must(r.store, httpengine.Limit(uploads, key), httpengine.WithLogger(slog.New(slog.DiscardHandler)))
	calls := r.shared.calls.Load()
	w := httptest.NewRecorder()
	tk := l.Start(httptest.NewRequest(http.MethodGet, "/", nil), w.Header())
	if tk.Disposition() != httpengine.Failed {
		t.Fatalf("Closed mode, failing store: %v; want Failed", tk.Disposition())
	}
	tk.Finish(0, false)
	if got := r.shared.calls.Load() - calls; got != 1 {
		t.Errorf("one failed decision made %d calls to the failing shared store; want 1", got)
	}
	if n := r.store.EndedLeases(); n != 1 {
		t.Errorf("the book holds %d ended leases for one failed acquire; want 1", n)
	}
}
