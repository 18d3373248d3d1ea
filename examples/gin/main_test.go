package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/httpengine/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func newStore(t *testing.T) *memory.Store {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	return store
}

// TestBurstThenRefusal: a client gets its burst of 20 at one instant, then 429.
func TestBurstThenRefusal(t *testing.T) {
	adaptertest.BurstThenRefusal(t, newHandler(newStore(t)), "/items/1", 20)
}

// TestLayers: the report costs 5 of "api", and a login is one decision over "api"
// and its stack.
func TestLayers(t *testing.T) { adaptertest.CheckLayeredExample(t, newHandler(newStore(t))) }

// TestInventedAPIKeysShareTheAddressBucket: an accepted key has a bucket of its
// own, while invented keys spend the address's bucket like requests without one.
func TestInventedAPIKeysShareTheAddressBucket(t *testing.T) {
	h := newHandler(newStore(t))
	get := func(apiKey string) int {
		r := httptest.NewRequest(http.MethodGet, "/items/1", nil)
		r.RemoteAddr = "203.0.113.9:4000"
		if apiKey != "" {
			r.Header.Set("X-API-Key", apiKey)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i := range 20 {
		if code := get(fmt.Sprintf("guess-%d", i)); code != http.StatusOK {
			t.Fatalf("invented key %d: %d, want 200 within the address's burst", i, code)
		}
	}
	if code := get(""); code != http.StatusTooManyRequests {
		t.Fatalf("no key after 20 invented ones: %d, want 429", code)
	}
	if code := get("demo-key"); code != http.StatusOK {
		t.Fatalf("accepted key: %d, want 200", code)
	}
}
