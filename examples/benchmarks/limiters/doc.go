// Package limiters wraps this library and the libraries it is compared with behind one
// shape, so that every scenario of package harness runs every one of them under the
// same policy: a rate per second and a burst.
//
//	for _, impl := range limiters.Memory() {
//		l, err := impl.New(limiters.Env{}, limiters.Throughput)
//		if err != nil {
//			return err
//		}
//		decide := l.Worker() // one per goroutine
//		allowed, err := decide(ctx, "user-42")
//		l.Close()
//	}
//
// Peers that count in fixed windows (go-limiter, ulule, httprate) take the rate as
// the limit of a one-second window and ignore the burst; the others are buckets of
// capacity Burst refilled at Rate per second.
package limiters
