package httpengine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// An adapter's whole job: Start, act on the disposition, Finish. The login is
// limited per account, read from the form body as the handler will read it:
// alice's third attempt is refused, bob's first is not.
func ExampleLimiter() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	login := core.MustPolicy("login", core.FixedWindow, core.PerMinute(2))
	l := httpengine.Must(store, httpengine.Limit(login, keyfuncs.FormField("username")))

	for _, username := range []string{"alice", "alice", "alice", "bob"} {
		body := url.Values{"username": {username}, "password": {"x"}}.Encode()
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		t := l.Start(r, w.Header())
		switch t.Disposition() {
		case httpengine.Denied:
			httpengine.WriteDenial(w, t.Denial())
		case httpengine.Failed:
			httpengine.WriteError(w, t.Err())
		default:
			if t.Wait(r.Context()) == nil {
				w.WriteHeader(http.StatusNoContent) // the handler
			}
		}
		t.Finish(w.Code, true)
		fmt.Printf("%d %s Retry-After=%q\n", w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
	}
	// Output:
	// 204 "login";r=1;t=60 Retry-After=""
	// 204 "login";r=0;t=60 Retry-After=""
	// 429 "login";r=0;t=60 Retry-After="60"
	// 204 "login";r=1;t=60 Retry-After=""
}
