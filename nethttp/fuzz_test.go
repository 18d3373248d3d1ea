package nethttp_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// FuzzMiddlewareNever5xx feeds arbitrary peers, forwarding headers and API keys
// through the middleware behind a trusted proxy: every request is answered 200 or
// 429, never 5xx, and never panics.
func FuzzMiddlewareNever5xx(f *testing.F) {
	f.Add("10.0.0.1:80", "1.2.3.4, 10.0.0.2", `for="[2001:db8::1]:80"`, "key")
	f.Add("[::ffff:10.0.0.1]:80", "garbage,,,", "for=unknown;proto=http, for=_hidden", "")
	f.Add("@", "\x00\xff", `for="`, strings.Repeat("k", 6000))
	f.Add("", strings.Repeat("1.1.1.1,", 200), strings.Repeat("for=1.1.1.1,", 200), "\r\n")
	f.Fuzz(func(t *testing.T, peer, xff, forwarded, apiKey string) {
		store := newStore(t)
		api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
		proxy := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
		h := nethttp.Middleware(store, httplimit.Limit(api, keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", keyfuncs.APIKeySet("key")), proxy.Key)))(http.HandlerFunc(hello))
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = peer
		r.Header["X-Forwarded-For"] = []string{xff}
		r.Header["Forwarded"] = []string{forwarded}
		r.Header["X-Api-Key"] = []string{apiKey}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 && w.Code != http.StatusTooManyRequests {
			t.Fatalf("status %d for peer %q xff %q forwarded %q", w.Code, peer, xff, forwarded)
		}
	})
}
