// Package prommetrics counts what the rate limiter does in Prometheus metrics with
// stable names, registered on a prometheus.Registerer of the caller's (never the
// global registry):
//
//	ratelimit_decisions_total{policy,result}            counter: allowed, denied, shadow_denied, uncharged, unenforced, unavailable, error
//	ratelimit_key_fallbacks_total{policy,kind}          counter: no identity found, by the fallback taken: ip, refuse, skip
//	ratelimit_errors_total{reason}                      counter: undecided requests: key, policy, cost, store, canceled, other
//	ratelimit_store_errors_total{store,kind}            counter: timeout, unavailable, overload, permanent
//	ratelimit_store_latency_seconds                     histogram of shared-store calls
//	ratelimit_fallback_active{policy}                   gauge: 1 while the policy is in its failure mode
//	ratelimit_fallback_transitions_total{policy,to}     counter: to open, closed, local or shared
//	ratelimit_local_refusals_total{policy}              counter: requests the pre-limiter refused (hot keys)
//
// The first three come from the HTTP layer, on any store: attach HTTPObserver to
// every Limiter (a resilient store adds the decisions its failure mode answers,
// unavailable and error). The others come from a resilient.Store, whose observer
// a Metrics is. docs/metrics.md describes every label value.
//
//	registry := prometheus.NewRegistry()
//	metrics, err := prommetrics.New(registry, prommetrics.WithPolicies("api"))
//	if err != nil {
//		return err
//	}
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key),
//		httplimit.WithObserver(metrics.HTTPObserver())))
//	// With a resilient store: resilient.New(shared, resilient.WithMonitor(metrics))
//	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
package prommetrics
