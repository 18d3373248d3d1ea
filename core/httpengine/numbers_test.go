package httpengine_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// TestLargeNumbersInFields checks the numbers beyond the precomputed ones (0 to
// 120): the legacy fields of an hourly policy and the Retry-After of its refusal,
// on responses kept while later ones are written.
func TestLargeNumbersInFields(t *testing.T) {
	store, clock := newStore(t)
	hourly := core.MustPolicy("hourly", core.FixedWindow, core.PerHour(1000))
	l := httpengine.Must(store, httpengine.Limit(hourly, headerKey), httpengine.WithFields(httpengine.IETFFields|httpengine.LegacyFields))
	var kept []http.Header
	for range 1000 {
		kept = append(kept, serve(l, request("192.0.2.1:1000", "X-Key", "a"), ok).Header())
	}
	clock.Advance(1000 * time.Second)
	refused := serve(l, request("192.0.2.1:1000", "X-Key", "a"), ok)
	if refused.Code != http.StatusTooManyRequests || refused.Header().Get("Retry-After") != "2600" {
		t.Fatalf("status %d Retry-After %q, want 429 and 2600", refused.Code, refused.Header().Get("Retry-After"))
	}
	for name, want := range map[string]string{
		"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "2600",
		"RateLimit": `"hourly";r=0;t=2600`,
	} {
		if got := refused.Header().Get(name); got != want {
			t.Errorf("refused: %s %q, want %q", name, got, want)
		}
	}
	for i, h := range kept {
		for name, want := range map[string]string{
			"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": strconv.Itoa(999 - i), "X-RateLimit-Reset": "3600",
		} {
			if got := h.Get(name); got != want {
				t.Fatalf("request %d: %s %q, want %q", i+1, name, got, want)
			}
		}
	}
}
