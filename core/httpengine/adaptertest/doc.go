// Package adaptertest is the suite every router adapter of core/httpengine runs
// through its real router:
//
//   - RunOptions: shadow mode, a skipper, a policy per request and the
//     leaky-bucket wait, behind one middleware (a Mount);
//
//   - RunComposition: limiters declared app-wide and per route make one decision
//     per request (the same policy charged once at the inner cost, different
//     policies all-or-nothing, one RateLimit field listing each policy once, one
//     observer event), per-route costs from one app-wide table, and values stored
//     the router's way reaching keyfuncs.Tenant and keyfuncs.User (a Build);
//
//   - RunPerIP: the one-line limiter, and that dropping it leaks no goroutine;
//
//   - CheckLayeredExample and BurstThenRefusal: the router examples' programs.
//
//     func TestEngineOptionsThroughTheRouter(t *testing.T) {
//     adaptertest.RunOptions(t, func(store core.Store, limits httpengine.Limits, options ...httpengine.Option) http.Handler {
//     mux := http.NewServeMux()
//     mux.Handle("GET /x", nethttp.Middleware(store, limits, options...)(http.HandlerFunc(ok)))
//     return mux
//     })
//     }
package adaptertest
