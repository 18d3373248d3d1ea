package chimw_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

func newStore(t testing.TB) *memory.Store {
	t.Helper()
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func hello(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }

func get(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = "203.0.113.5:4000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMiddlewareOnChiRouter(t *testing.T) {
	store := newStore(t)
	peer := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(6))
	r := chi.NewRouter()
	r.Get("/healthz", hello)
	r.Group(func(r chi.Router) {
		r.Use(chimw.Middleware(store, httplimit.Limit(api, peer.Key)))
		r.Get("/api/resource", hello)
	})
	r.With(chimw.Middleware(store, httplimit.Limit(api, peer.Key), httplimit.WithCost(5))).Get("/api/report", hello)

	if w := get(t, r, "GET", "/api/report"); w.Code != 200 || w.Header().Get("RateLimit") != `"api";r=1;t=60` {
		t.Fatalf("report: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
	if w := get(t, r, "GET", "/api/resource"); w.Code != 200 || w.Header().Get("RateLimit") != `"api";r=0;t=60` {
		t.Fatalf("resource: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
	if w := get(t, r, "GET", "/api/resource"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("refusal: %d %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := get(t, r, "GET", "/healthz"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
		t.Fatalf("healthz: %d", w.Code)
	}
}

func TestRouteKeysEveryEndpointApart(t *testing.T) {
	store := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	obs := &keys{}
	r := chi.NewRouter()
	r.Use(chimw.Middleware(store, httplimit.Limit(one, chimw.Route()), httplimit.WithObserver(obs)))
	r.Get("/items/{id}", hello)
	r.Route("/admin", func(r chi.Router) {
		r.Use(chimw.Middleware(store, httplimit.Limit(core.MustPolicy("admin", core.FixedWindow, core.PerMinute(1)), chimw.Route()), httplimit.WithObserver(obs)))
		r.Get("/users/{id}", hello)
	})
	r.With(chimw.Middleware(store, httplimit.Limit(core.MustPolicy("inline", core.FixedWindow, core.PerMinute(1)), chimw.Route()), httplimit.WithObserver(obs))).
		Post("/items/{id}", hello)

	get(t, r, "GET", "/items/1")
	if w := get(t, r, "GET", "/items/2"); w.Code != http.StatusTooManyRequests {
		t.Errorf("second item, same route: %d, want 429", w.Code)
	}
	get(t, r, "GET", "/admin/users/7")
	// The route's methods share its budget: a POST earns no fresh one, so the
	// app-wide limiter refuses it before the inline one runs.
	if w := get(t, r, "POST", "/items/3"); w.Code != http.StatusTooManyRequests {
		t.Errorf("POST of the same route: %d, want 429", w.Code)
	}
	get(t, r, "GET", "/nowhere")
	want := []string{
		"route:/items/{id}", "route:/items/{id}",
		"route:/admin/users/{id}", "route:/admin/users/{id}",
		"route:/items/{id}",
		"ip:203.0.113.5", // no route: the fallback key
	}
	if len(obs.keys) != len(want) {
		t.Fatalf("keys %q, want %q", obs.keys, want)
	}
	for i := range want {
		if obs.keys[i] != want[i] {
			t.Fatalf("keys %q, want %q", obs.keys, want)
		}
	}
}

type keys struct{ keys []string }

func (k *keys) OnDecision(e *httplimit.Event) {
	for _, req := range e.Requests {
		k.keys = append(k.keys, req.Key)
	}
}
func (k *keys) OnError(*http.Request, error) {}
