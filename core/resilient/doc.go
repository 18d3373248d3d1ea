// Package resilient keeps a rate limiter deciding when its shared store (Redis)
// fails, and makes the failure explicit, bounded and visible.
//
// A Store wraps a shared core.Store and is a core.Store itself:
//
//   - Failure modes per policy: Open admits unenforced (core.Result.Unenforced),
//     Closed refuses with an *UnavailableError (HTTP 503 with Retry-After, not 429),
//     Local enforces the policy in process memory, optionally stricter (WithReplicas,
//     WithDegrade). DecideStack defines what a stack of mixed modes does.
//   - Degrading never refills a bucket: Local mode continues each key from the last
//     answer the shared store gave for it (scaled to the replica's share), and on
//     return the shared store is charged what the local allowance spent, so that it
//     grants no second bucket, even after a restart that lost its state.
//   - Load is not failure: every shared-store call has a deadline that follows the
//     recent p99 latency (WithDeadline, WithAdaptiveDeadline: 50 to 200ms by
//     default) and holds even for a client that ignores ctx. A call that fails while
//     the breaker stays closed is decided from the key's last shared answer, without
//     refill.
//   - Circuit breakers (WithBreaker, WithFailureRate) open on a failure rate over a
//     window with a minimum of calls, once a probe confirms the outage; for a store that
//     names its keys (the Redis store) there is one per Cluster slot, so a
//     stuck master affects only the keys that live on it. While open, a breaker probes
//     in the background, with or without traffic, and closes after two good probes in
//     a row (WithRecoveryProbes).
//   - A cancelled or expired caller context is not a store failure: it is returned as
//     an error, not counted, and never trips the breaker.
//   - Permanent errors (WRONGTYPE, CROSSSLOT, an unknown command, a script error) are
//     never turned into "allowed": they wrap ErrPermanent in every mode and are logged
//     at error level. Check runs real decisions at start-up to find them early.
//   - A local pre-limiter refuses keys the shared store refused, without a round trip,
//     until their Retry-After has passed: hot abusive keys cost the store nothing.
//   - Observability: a Monitor hook for decisions, store calls (latency, error kind),
//     fallback transitions and local refusals (core/prommetrics implements it for
//     Prometheus), warn logs for every transition into and out of fallback with how
//     long it lasted, and sampled decision logs at debug level through log/slog that name the key's
//     type, never the key.
//
// Wrapping the Redis store, with metrics:
//
//	shared, err := redisstore.Dial([]string{"127.0.0.1:6379"})
//	if err != nil {
//		return err
//	}
//	metrics, err := prommetrics.New(prometheus.NewRegistry())
//	if err != nil {
//		return err
//	}
//	store, err := resilient.New(shared, // the Store owns shared, and a prober goroutine
//		resilient.WithMode(resilient.Local), resilient.WithReplicas(4),
//		resilient.WithPolicyMode("login-account", resilient.Closed),
//		resilient.WithStoreName("redis"), resilient.WithMonitor(metrics))
//	if err != nil {
//		return err
//	}
//	defer store.Close() // closes shared too
//	if err := store.Check(ctx); errors.Is(err, resilient.ErrPermanent) {
//		return err // this Redis cannot serve the limiter: fail at start-up
//	}
//
// docs/failure.md states the over-grant bound of each transition and how it is
// measured.
package resilient
