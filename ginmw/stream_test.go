package ginmw_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// TestSettledGinStream: a gin engine wrapped in nethttp.Middleware, as
// docs/composition.md shows to limit what gin answers before its middlewares (its
// redirects), with a settle function, which records the status through a writer of
// its own. gin's c.Stream asserts http.CloseNotifier on that writer without
// checking: server-sent events answered 500 with an empty body.
func TestSettledGinStream(t *testing.T) {
	gin.SetMode(gin.TestMode)
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	engine := gin.New()
	engine.GET("/events", func(c *gin.Context) {
		n := 0
		c.Stream(func(io.Writer) bool {
			c.SSEvent("tick", n)
			n++
			return n < 3
		})
	})
	refundServerErrors := httplimit.WithSettle(func(_ *http.Request, status int, cost int64) int64 {
		if status >= 500 {
			return 0
		}
		return cost
	})
	srv := httptest.NewServer(nethttp.Middleware(store, httplimit.Limit(api, func(*http.Request) (string, error) { return "k", nil }), refundServerErrors)(engine))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), "event:tick") != 3 {
		t.Fatalf("%d %q, want 200 and three events", resp.StatusCode, body)
	}
}
