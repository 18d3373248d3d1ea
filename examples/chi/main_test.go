package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestBurstThenRefusal: a client gets its burst of 20 at one instant, then 429.
func TestBurstThenRefusal(t *testing.T) {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	defer store.Close()
	h := newHandler(store)
	for i := range 20 + 1 {
		r := httptest.NewRequest(http.MethodGet, "/items/1", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := http.StatusOK
		if i == 20 {
			want = http.StatusTooManyRequests
		}
		if w.Code != want {
			t.Fatalf("request %d: %d, want %d (RateLimit %q)", i+1, w.Code, want, w.Header().Get("RateLimit"))
		}
	}
}
