package chimw

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// Route keys a request by its chi route: "route:" + the pattern, such as
// "route:/items/{id}", in full even for routes of mounted subrouters. Unlike
// keyfuncs.Route (a ServeMux's pattern, method included), every method of a chi
// route shares its budget (see keyfuncs.RoutePattern).
// It works wherever the middleware sits: in r.With the endpoint's pattern is
// already known; in r.Use, before chi has routed the request, the pattern is
// found from the root router (one tree search). A request that matches no route
// gets keyfuncs.ErrNoKey, and so the limiter's fallback key: a 404, or a 405, also
// one a mounted router answers at its index. Middleware that
// rewrites the path chi routes on (StripSlashes, CleanPath, GetHead) is followed
// when it runs before the limiter; put it there, not in a mounted router below
// a limiter in r.Use, whose rewrites that limiter cannot see.
func Route() keyfuncs.KeyFunc {
	return keyfuncs.RoutePattern(new(routeFinder).pattern)
}

// routeFinder finds the chi route of requests, for one middleware or key function.
type routeFinder struct {
	mounts mountIndexes
}

// pattern is the pattern of the chi route r goes to, "" for none (chi answers 404
// or 405). chi's own record of its routing comes first: r.Pattern may be a
// ServeMux's that mounts the chi router.
func (f *routeFinder) pattern(r *http.Request) string {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil || rctx.Routes == nil {
		return r.Pattern // not under chi
	}
	if n := len(rctx.RoutePatterns); n > 0 && !strings.HasSuffix(rctx.RoutePatterns[n-1], "*") {
		// chi has routed the request to its endpoint, and then set r.Pattern to
		// the route, which RoutePattern would join again on every request.
		if r.Pattern != "" {
			return r.Pattern
		}
		return rctx.RoutePattern()
	}
	method, path := r.Method, r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	if path == "" {
		path = "/" // as chi routes a request without a path ("CONNECT host:443")
	}
	// chi routes on its own record of the method and path, which middleware such
	// as GetHead, StripSlashes and CleanPath rewrite: HEAD /items/ goes to
	// GET /items. Found from the raw request instead, such a request would match
	// no route (a route cost of 1, the fallback key: a second bucket).
	if rctx.RouteMethod != "" {
		method = rctx.RouteMethod
	}
	if rctx.RoutePath != "" {
		path = fullRoutePath(rctx, path)
	}
	// Named as chi names the route once routed (RoutePattern, which r.Pattern
	// then holds): a mounted router's index is "/reports" for GET /reports and
	// GET /reports/ alike, where Find returns the pattern each spelling matched.
	found := chi.NewRouteContext()
	if rctx.Routes.Find(found, method, path) == "" {
		return ""
	}
	pattern := found.RoutePattern()
	if !f.mounts.answers(rctx.Routes, method, pattern) {
		return ""
	}
	return pattern
}

// fullRoutePath is the path the root router would route for rctx.RoutePath, the
// path chi routes next: that path itself before any route matched, else (in a
// mounted router) the part of path the mounts consumed, followed by it. A mount
// pattern's segments each match one segment of the path (a parameter whose
// regular expression spans a "/" would not, and is not supported here).
func fullRoutePath(rctx *chi.Context, path string) string {
	if len(rctx.RoutePatterns) == 0 {
		return rctx.RoutePath
	}
	mounts := strings.TrimSuffix(rctx.RoutePattern(), "/*")
	consumed := 0
	for range strings.Count(mounts, "/") {
		next := strings.IndexByte(path[consumed+1:], '/')
		if next < 0 {
			return path
		}
		consumed += 1 + next
	}
	return path[:consumed] + rctx.RoutePath
}
