package httpengine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

type tenantKey struct{}

// A request without a tenant in its context is refused rather than limited by
// its address: the choice is explicit.
func ExampleWithKeyFallback() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	plan := core.MustPolicy("plan", core.FixedWindow, core.PerMinute(100))
	for _, fallback := range []httpengine.KeyFallback{
		httpengine.ClientIPFallback(nil), httpengine.RefuseFallback(), httpengine.SkipFallback(),
	} {
		l := httpengine.Must(store, httpengine.Limit(plan, keyfuncs.Tenant(tenantKey{})), httpengine.WithKeyFallback(fallback))
		r := httptest.NewRequest(http.MethodGet, "/api/resource", nil) // no tenant
		w := httptest.NewRecorder()
		t := l.Start(r, w.Header())
		if t.Outcome() == httpengine.Failed {
			httpengine.WriteError(w, t.Err())
		}
		fmt.Println(strings.TrimSpace(fmt.Sprintln(t.Outcome(), w.Code, w.Header().Get("RateLimit"))))
		t.Finish(w.Code, true)
	}
	// Output:
	// admitted 200 "plan";r=99;t=60
	// failed 400
	// skipped 200
}
