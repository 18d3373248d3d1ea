package adaptertest

import (
	"net/http"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// AppWide serves GET /api/report (200) on the adapter's real router, behind the
// adapter's middleware in its app-wide position (r.Use, or around a ServeMux), built
// from store, limits and options.
type AppWide func(store core.Store, limits httpengine.Limits, options ...httpengine.Option) http.Handler

// RunMountedRouteCosts checks that a route's cost applies whether the router serves
// requests itself or is mounted under a ServeMux ("/api/"), which sets r.Pattern to
// its own pattern before the router runs. pattern is the router's name for the route,
// as httplimit.WithRouteCosts matches it.
func RunMountedRouteCosts(t *testing.T, pattern string, build AppWide) {
	api := core.MustPolicy("api", core.TokenBucket, core.PerHour(20))
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	costs := httpengine.WithRouteCosts(map[string]int64{pattern: 5})
	for _, mounted := range []bool{false, true} {
		name := "alone"
		if mounted {
			name = "under a ServeMux"
		}
		t.Run(name, func(t *testing.T) {
			h := build(newStore(t), httpengine.Limit(api, ip.Key), costs)
			if mounted {
				mux := http.NewServeMux()
				mux.Handle("/api/", h)
				h = mux
			}
			if w := send(h, "/api/report"); w.Code != http.StatusOK || w.Header().Get("RateLimit") != `"api";r=15;t=900` {
				t.Fatalf("first report: %d, RateLimit %q; want 200 and 15 of 20 left (cost 5)", w.Code, w.Header().Get("RateLimit"))
			}
			admitted := 1
			for range 10 {
				if send(h, "/api/report").Code == http.StatusOK {
					admitted++
				}
			}
			if admitted != 4 {
				t.Fatalf("%d reports admitted, want 4 (cost 5 of 20)", admitted)
			}
		})
		// A method the route does not serve is answered by the router, not by the
		// route (405, or 404 on gin by default): it costs the default 1, not the
		// route's weight, as any request no route serves.
		t.Run(name+", a method the route does not serve", func(t *testing.T) {
			h := build(newStore(t), httpengine.Limit(api, ip.Key), costs)
			if mounted {
				mux := http.NewServeMux()
				mux.Handle("/api/", h)
				h = mux
			}
			w := sendMethod(h, http.MethodDelete, "/api/report")
			if (w.Code != http.StatusMethodNotAllowed && w.Code != http.StatusNotFound) || w.Header().Get("RateLimit") != `"api";r=19;t=180` {
				t.Fatalf("DELETE: %d, RateLimit %q; want 405 or 404 and 19 of 20 left (cost 1)", w.Code, w.Header().Get("RateLimit"))
			}
		})
		// A spelling of the route's path that the router answers itself (a
		// redirect to the clean path, as ServeMux's, or 404) is not the route
		// either: it costs at most the default, and following the redirect then
		// costs the route's weight once.
		t.Run(name+", a path the router redirects or refuses", func(t *testing.T) {
			for _, path := range []string{"//api/report", "/api//report", "/api/./report", "/api/x/../report", "/api/report/"} {
				h := build(newStore(t), httpengine.Limit(api, ip.Key), costs)
				if mounted {
					mux := http.NewServeMux()
					mux.Handle("/api/", h)
					h = mux
				}
				w := send(h, path)
				if rl := w.Header().Get("RateLimit"); w.Code == http.StatusOK || (rl != "" && rl != `"api";r=19;t=180`) {
					t.Errorf("GET %s: %d, RateLimit %q; want a redirect or 404 at cost 1 at most", path, w.Code, rl)
				}
			}
		})
	}
}
