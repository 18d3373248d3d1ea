package chimw

import (
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
)

// mountIndexes tells whether a mounted subrouter answers its index. For
// r.Mount("/reports", sub), chi registers "/reports" and "/reports/" for every
// method and hands them to sub as "/"; Mux.Find returns "/reports" for every
// method, even one sub answers 405 (or 404, when sub has no "/"). Read as the
// route, that 405 paid the index's weight (5 instead of 1 in
// TestMountedIndexCostsOnlyWhatItAnswers). mountIndexes keeps, per root router,
// the subrouter behind each mount's full pattern, read from Routes once: routes
// added to a subrouter later are seen, mounts added to a router after its first
// request are not (they cost as before, the index's weight).
type mountIndexes struct {
	byRoot sync.Map // chi.Routes → map[string]chi.Routes: full mount pattern → subrouter
}

// answers reports whether method reaches a route when it asks for the index of the
// mount whose full pattern is pattern; true when pattern is not such a mount.
func (m *mountIndexes) answers(root chi.Routes, method, pattern string) bool {
	mounts, ok := m.byRoot.Load(root)
	if !ok {
		mounts, _ = m.byRoot.LoadOrStore(root, mountsOf(root, "", map[string]chi.Routes{}))
	}
	sub, ok := mounts.(map[string]chi.Routes)[pattern]
	return !ok || sub.Find(chi.NewRouteContext(), method, "/") != ""
}

// mountsOf adds to into the subrouters mounted in routes and below, by full
// pattern under prefix, as chi names a mount's index ("/api/reports").
func mountsOf(routes chi.Routes, prefix string, into map[string]chi.Routes) map[string]chi.Routes {
	for _, route := range routes.Routes() {
		base, ok := strings.CutSuffix(route.Pattern, "/*")
		if !ok || route.SubRoutes == nil {
			continue
		}
		into[prefix+base] = route.SubRoutes
		mountsOf(route.SubRoutes, prefix+base, into)
	}
	return into
}
