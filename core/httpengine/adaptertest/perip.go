package adaptertest

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// BuildPerIP returns the adapter's real router serving GET /x behind the
// adapter's one-line PerIP(rate) middleware, installed app-wide.
type BuildPerIP func(rate core.Rate) http.Handler

// RunPerIP checks an adapter's one-line limiter: per client address, with the
// fields of its "per-ip" policy, and dropping it leaves no goroutine behind.
func RunPerIP(t *testing.T, build BuildPerIP) {
	send := func(h http.Handler, peer string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		r.RemoteAddr = peer
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	t.Run("per client address", func(t *testing.T) {
		h := build(core.PerHour(2)) // a token every 30 minutes: none comes back during the test
		for i, want := range []int{200, 200, 429} {
			w := send(h, "198.51.100.7:4000")
			if w.Code != want || w.Header().Get("RateLimit-Policy") != `"per-ip";q=2;w=3600` {
				t.Fatalf("request %d: %d %q, want %d", i+1, w.Code, w.Header().Get("RateLimit-Policy"), want)
			}
		}
		if w := send(h, "198.51.100.8:4000"); w.Code != 200 {
			t.Fatalf("another client: %d, want 200", w.Code)
		}
	})
	t.Run("dropping it leaks no goroutine", func(t *testing.T) {
		before := runtime.NumGoroutine()
		for range 20 {
			send(build(core.PerSecond(10)), "198.51.100.7:4000")
		}
		runtime.GC()
		if after := runtime.NumGoroutine(); after > before {
			t.Fatalf("%d goroutines after building and dropping 20 limiters, %d before", after, before)
		}
	})
}
