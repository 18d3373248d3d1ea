// Package resilient keeps a rate limiter deciding when its shared store (Redis)
// fails, and makes the failure explicit, bounded and visible.
//
// A Store wraps a shared core.Store and is a core.Store itself:
//
//   - Failure modes per policy: Open admits unenforced (core.Result.Unenforced),
//     Closed refuses with an *UnavailableError (HTTP 503 with Retry-After, not 429),
//     Local enforces the policy in process memory, optionally stricter (WithReplicas,
//     WithDegrade). DecideStack defines what a stack of mixed modes does.
//   - Bounded waiting: every shared-store call has a deadline (WithDeadline, 50ms by
//     default) that holds even for a client that ignores ctx. A hung store (it accepts
//     connections and never answers) and a dead one (connection refused) both become
//     the failure mode within it.
//   - A circuit breaker (WithBreaker) stops calling a failing store, probes it one call
//     at a time after a cooldown, and returns to shared enforcement on its own.
//   - A cancelled or expired caller context is not a store failure: it is returned as
//     an error, not counted, and never trips the breaker.
//   - Permanent errors (WRONGTYPE, CROSSSLOT, an unknown command, a script error) are
//     never turned into "allowed": they wrap ErrPermanent in every mode and are logged
//     at error level. Check runs real decisions at start-up to find them early.
//   - A local pre-limiter refuses keys the shared store refused, without a round trip,
//     until their Retry-After has passed: hot abusive keys cost the store nothing.
//   - Observability: an Observer hook for decisions, store calls (latency, error kind),
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
//	store, err := resilient.New(shared,
//		resilient.WithMode(resilient.Local), resilient.WithReplicas(4),
//		resilient.WithPolicyMode("login-account", resilient.Closed),
//		resilient.WithStoreName("redis"), resilient.WithObserver(metrics))
//	if err != nil {
//		return err
//	}
//	defer store.Close() // closes shared too
//	if err := store.Check(ctx); errors.Is(err, resilient.ErrPermanent) {
//		return err // this Redis cannot serve the limiter: fail at start-up
//	}
package resilient
