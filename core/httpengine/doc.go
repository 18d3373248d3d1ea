// Package httpengine is the engine behind the router adapters nethttp, chimw,
// ginmw and echomw: it decides each request, writes its rate-limit fields and
// tells the adapter what to do with it. It imports no web framework.
//
// Applications import httplimit, to declare their limits, and a router package;
// import httpengine only to write an adapter for another router. The vocabulary
// both share (Limits, Option, Observer, Event, Fields, KeyFallback, Denial, …) is
// defined here and re-exported by httplimit, whose documentation (with
// docs/composition.md) explains it: what a request goes through, each option, and
// how nested limiters compose into one decision. Its errors are prefixed
// "httplimit:", after the package the application writes its configuration with.
//
// An adapter builds a Limiter from the application's Limits and Options (New,
// Must, or PerIP for the one-line limiter), then drives each request through a
// Ticket. The net/http adapter, in full, is little more than this:
//
//	t := l.Start(r, w.Header())
//	switch t.Disposition() {
//	case httpengine.Denied:
//		httpengine.WriteDenial(w, t.Denial())
//		t.Finish(http.StatusTooManyRequests, true)
//	case httpengine.Failed:
//		httpengine.WriteError(w, t.Err())
//		t.Finish(0, true)
//	case httpengine.Admitted:
//		if err := t.Wait(r.Context()); err != nil { // the client left, or a deadline passed
//			httpengine.WriteError(w, err) // 503, for a client still there
//			t.Finish(0, false)
//			return
//		}
//		completed := false
//		defer func() { t.Finish(status, completed) }() // also on panic
//		next.ServeHTTP(w, t.Request())
//		completed = true
//	default: // Skipped
//		next.ServeHTTP(w, r)
//	}
//
// The adapter's part of the contract:
//
//   - Start decides the request and sets the rate-limit fields (and Retry-After,
//     on a refusal) on the response header it is given, before anything is
//     written;
//   - the handler gets Ticket.Request: its context carries the decision, so that
//     a Limiter nested further in merges its own into it;
//   - Finish is called exactly once, from a deferred function, so that leases are
//     released when the handler panics (completed false: the request keeps its
//     whole cost). It needs the response status only when Ticket.RecordsStatus
//     reports it (a settle function covers one of the decision's policies), so
//     the adapter wraps the response writer only then;
//   - when NeedsPattern reports it (WithRouteCosts), the adapter sets r.Pattern to
//     its router's route for the request before Start, over a pattern that a
//     ServeMux mounting the router set;
//   - a wait that ends early (Wait's error: the client left, or a deadline set
//     before the middleware passed) is answered as an error (ErrorResponse: 499
//     for the one, 503 for the other);
//   - a router that keeps values outside the request context (gin's and echo's
//     c.Set) passes them with WithRouterValues, so that key functions such as
//     keyfuncs.Tenant read them;
//   - the adapter's own options (a deny handler in the router's shape) travel in
//     the same Option list: AdapterOption wraps them, Limiter.AdapterOptions gives
//     them back, ErrorOption makes New fail for an invalid one;
//   - the default responses are WriteDenial and WriteError for net/http, and
//     Denial.Problem, Denial.SetContentType and ErrorResponse for other shapes.
//     No response carries an error's text.
//
// The package adaptertest runs the shared suite (options, composition, the
// one-line limiter) through an adapter's real router.
package httpengine
