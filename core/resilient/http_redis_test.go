package resilient_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// Through the net/http middleware, on a hung Redis (once the outage is established): a
// Closed policy answers 503 with
// Retry-After (the client did nothing wrong, so not 429), an Open one lets the request
// through, a Local one answers 429 once the local limit is spent.
func TestRedisFaultsOverHTTP(t *testing.T) {
	srv := redistest.StartServer(t)
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, tt := range []struct {
		mode resilient.Mode
		want []int // statuses of successive requests
	}{
		{resilient.Closed, []int{503, 503, 503}},
		{resilient.Open, []int{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200}},
		{resilient.Local, []int{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429, 429}},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			r := newReplica(t, srv, resilient.WithMode(tt.mode))
			handler := nethttp.Middleware(r.store, httplimit.Limit(tenPerMinute, keyfuncs.Const("ip:198.51.100.20")))(ok)
			if err := srv.Pause(); err != nil {
				t.Fatal(err)
			}
			defer srv.Resume()
			openBreaker(t, r.store)
			for i, want := range tt.want {
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, httptest.NewRequest("GET", "/api/resource", nil))
				if w.Code != want {
					t.Fatalf("request %d: %d, want %d (%s)", i+1, w.Code, want, w.Body)
				}
				if want == 503 || want == 429 {
					if s, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || s < 1 {
						t.Fatalf("request %d: %d without a Retry-After (%q)", i+1, w.Code, w.Header().Get("Retry-After"))
					}
				}
			}
		})
	}
}
