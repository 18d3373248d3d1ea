// Package adaptertest is the suite every router adapter of core/httplimit runs
// through its real router: shadow mode, a skipper, a policy per request and the
// leaky-bucket wait. An adapter's test supplies a Mount that serves GET /x behind
// the adapter's middleware; the suite does the rest.
//
//	func TestEngineOptionsThroughTheRouter(t *testing.T) {
//		adaptertest.RunOptions(t, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
//			mux := http.NewServeMux()
//			mux.Handle("GET /x", nethttp.Middleware(store, limits, options...)(http.HandlerFunc(ok)))
//			return mux
//		})
//	}
package adaptertest
