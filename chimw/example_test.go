package chimw_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/go-chi/chi/v5"
	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// Each endpoint gets its own budget per client: the key joins the chi route
// pattern and the client IP.
func ExampleRoute() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	perEndpoint := core.MustPolicy("endpoint", core.FixedWindow, core.PerMinute(1))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})

	r := chi.NewRouter()
	r.Use(chimw.Middleware(store, httplimit.Limit(perEndpoint, keyfuncs.Join(chimw.Route(), clientIP.Key))))
	r.Get("/items/{id}", func(w http.ResponseWriter, _ *http.Request) {})
	r.Get("/users/{id}", func(w http.ResponseWriter, _ *http.Request) {})

	for _, path := range []string{"/items/1", "/items/2", "/users/1"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code)
	}
	// Output:
	// /items/1 200
	// /items/2 429
	// /users/1 200
}
