package nethttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// panickingObserver is an Observer with a bug: OnDecision panics for admitted requests.
type panickingObserver struct{}

func (panickingObserver) OnDecision(e *httplimit.Event) {
	if e.Allowed {
		panic("metrics bug")
	}
}
func (panickingObserver) OnError(*http.Request, error) {}

// TestPanickingObserverLeaksNoLease: an observer that panics when told of an
// admitted request's decision (at the request's end) panics the request, as any
// panic of the application's code does, but the limiter has settled first: the
// concurrency lease is released, so the next request is admitted rather than
// refused for as long as the process runs.
func TestPanickingObserverLeaksNoLease(t *testing.T) {
	store := memory.MustNew(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	export := core.MustConcurrencyPolicy("export", 1, time.Minute)
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	h := nethttp.Middleware(store, httplimit.Limit(export, ip.Key), httplimit.WithObserver(panickingObserver{}))(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	for i := range 3 {
		w := httptest.NewRecorder()
		panicked := func() (p any) {
			defer func() { p = recover() }()
			r := httptest.NewRequest(http.MethodGet, "/export", nil)
			r.RemoteAddr = "203.0.113.5:4000"
			h.ServeHTTP(w, r)
			return nil
		}()
		if panicked != "metrics bug" || w.Code != http.StatusOK {
			t.Fatalf("request %d: %d, recovered %v; want 200 and the observer's panic: "+
				"a 429 is a lease an earlier request never released", i, w.Code, panicked)
		}
	}
}
