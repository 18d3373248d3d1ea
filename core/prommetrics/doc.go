// Package prommetrics counts what a resilient.Store does in Prometheus metrics with
// stable names, registered on a prometheus.Registerer of the caller's (never the
// global registry):
//
//	ratelimit_decisions_total{policy,result}            counter: allowed, denied, uncharged, unenforced, unavailable, error
//	ratelimit_store_errors_total{store,kind}            counter: timeout, unavailable, overload, permanent
//	ratelimit_store_latency_seconds                     histogram of shared-store calls
//	ratelimit_fallback_active{policy}                   gauge: 1 while the policy is in its failure mode
//	ratelimit_fallback_transitions_total{policy,to}     counter: to open, closed, local or shared
//	ratelimit_local_refusals_total{policy}              counter: requests the pre-limiter refused (hot keys)
//
// Use it as the Store's observer and serve the registry:
//
//	registry := prometheus.NewRegistry()
//	metrics, err := prommetrics.New(registry, prommetrics.WithPolicies("api"))
//	if err != nil {
//		return err
//	}
//	store, err := resilient.New(shared, resilient.WithObserver(metrics), resilient.WithStoreName("redis"))
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
package prommetrics
