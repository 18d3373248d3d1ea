package adaptertest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BurstThenRefusal sends burst+1 requests for target through h at one instant (h's
// store must run on a clock that stands still) and requires burst 200s, then a 429.
func BurstThenRefusal(t *testing.T, h http.Handler, target string, burst int) {
	t.Helper()
	for i := range burst + 1 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		want := http.StatusOK
		if i == burst {
			want = http.StatusTooManyRequests
		}
		if w.Code != want {
			t.Fatalf("request %d: %d, want %d (RateLimit %q)", i+1, w.Code, want, w.Header().Get("RateLimit"))
		}
	}
}
