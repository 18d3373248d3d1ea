package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/httplimit/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestBurstThenRefusal: a client gets its burst of 20 at one instant, then 429.
func TestBurstThenRefusal(t *testing.T) {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	defer store.Close()
	adaptertest.BurstThenRefusal(t, newHandler(store), "/hello", 20)
}

func TestReportCostsFive(t *testing.T) {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	defer store.Close()
	h := newHandler(store)
	for i, want := range []int{200, 200, 200, 200, 429} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/report", nil))
		if w.Code != want {
			t.Fatalf("report %d: %d, want %d", i+1, w.Code, want)
		}
	}
}
