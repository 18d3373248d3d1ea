package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

type tenantKey struct{}

// A request without a tenant in its context is limited by its address, refused,
// or let through unlimited: the choice is explicit.
func ExampleWithKeyFallback() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	plan := core.MustPolicy("plan", core.FixedWindow, core.PerMinute(100))
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, fallback := range []httplimit.KeyFallback{
		httplimit.ClientIPFallback(nil), httplimit.RefuseFallback(), httplimit.SkipFallback(),
	} {
		h := nethttp.Middleware(store, httplimit.Limit(plan, keyfuncs.Tenant(tenantKey{})),
			httplimit.WithKeyFallback(fallback))(ok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/resource", nil)) // no tenant
		fmt.Printf("%d %q\n", w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 "\"plan\";r=99;t=60"
	// 400 ""
	// 200 ""
}
