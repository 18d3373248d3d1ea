// Package adaptertest is the suite every router adapter of core/httpengine runs
// through its real router:
//
//   - RunOptions: shadow mode, a skipper, a policy per request, the
//     leaky-bucket wait, and leases released when an observer or a settle
//     function panics, behind one middleware (a Mount);
//
//   - RunComposition: limiters declared app-wide and per route make one decision
//     per request (the same policy charged once at the inner cost, or in both
//     buckets under two keys, different policies all-or-nothing, one RateLimit
//     field listing each policy once, one observer event, no lease left by a
//     refusal), per-route costs from one app-wide table, values stored
//     the router's way reaching keyfuncs.Tenant and keyfuncs.User, and no lease
//     leaked when an observer panics on a merge's failed refund (a Build);
//
//   - RunPerIP: the one-line limiter, and that dropping it leaks no goroutine;
//
//   - RunLeases: a concurrency lease released exactly once when the handler
//     ends, on a real server: it returns, panics, hijacks the connection or
//     streams, the client leaves mid-response, http.TimeoutHandler answers
//     first; and no lease kept when another policy of the stack, or a nested
//     limiter, refuses the request (a ServeHandler);
//
//   - CheckLayeredExample and BurstThenRefusal: the router examples' programs;
//
//   - RunMountedRouteCosts and RunJSONLoginDecoys: route costs under a mounting
//     ServeMux, and decoy fields in a JSON login.
//
// A router package runs them in its tests:
//
//	func TestEngineOptionsThroughTheRouter(t *testing.T) {
//		adaptertest.RunOptions(t, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
//			mux := http.NewServeMux()
//			mux.Handle("GET /x", nethttp.Middleware(store, limits, options...)(http.HandlerFunc(ok)))
//			return mux
//		})
//	}
package adaptertest
