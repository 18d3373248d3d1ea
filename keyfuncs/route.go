package keyfuncs

import (
	"fmt"
	"net/http"
	"strings"
)

// routePrefix starts every key Route and RoutePattern return.
const routePrefix = "route:"

// errNoPattern reports a request that no route pattern matched.
var errNoPattern = fmt.Errorf("%w: no route pattern", ErrNoKey)

// Route returns a KeyFunc that keys a request by its endpoint on a net/http
// ServeMux (Go 1.22 patterns): "route:" + the matched pattern, for example
// "route:GET /items/{id}". The method in the key is the pattern's, never the
// request's: a HEAD request matched by "GET /items/{id}" counts as that GET
// route, and a pattern without a method ("/search") serves every method from
// one budget, so a client cannot earn a fresh one by sending another method,
// or one it made up. A request that no ServeMux pattern matched (r.Pattern
// empty, as outside a ServeMux) gets ErrNoKey.
//
// Key by route to give every endpoint its own budget, or Join it with an
// identity to limit each client per endpoint. Other routers expose their
// patterns differently: use RoutePattern with the router's accessor (on chi,
// chimw.Route, whose keys have no method).
func Route() KeyFunc {
	return RoutePattern(func(r *http.Request) string { return r.Pattern })
}

// RoutePattern returns a KeyFunc like Route that reads the matched route
// pattern with pattern, for routers that keep it elsewhere; with chi:
//
//	keyfuncs.RoutePattern(func(r *http.Request) string {
//		return chi.RouteContext(r.Context()).RoutePattern()
//	})
//
// The key is "route:" + the pattern as the router names it. chi, gin and echo
// name a route by its path ("/items/{id}"), so its methods share one budget:
// to give one method its own, limit that route with its own middleware. An
// empty pattern gets ErrNoKey. RoutePattern panics when pattern is nil.
func RoutePattern(pattern func(r *http.Request) string) KeyFunc {
	if pattern == nil {
		panic("keyfuncs: RoutePattern needs a pattern function")
	}
	return func(r *http.Request) (string, error) {
		p := pattern(r)
		if p == "" {
			return "", errNoPattern
		}
		return boundKey(routePrefix + safeValue(canonicalPattern(p))), nil
	}
}

// canonicalPattern writes a "[METHOD ][HOST]/[PATH]" pattern with one space after
// its method, as ServeMux accepts any run of spaces and tabs there.
func canonicalPattern(p string) string {
	if i := strings.IndexAny(p, " \t"); i >= 0 && !strings.Contains(p[:i], "/") {
		return p[:i] + " " + strings.TrimLeft(p[i:], " \t")
	}
	return p
}
