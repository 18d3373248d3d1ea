// Package resilient keeps a rate limiter deciding when its shared store (Redis)
// fails. Its Store, a core.Store, wraps the shared one and owns it. Each policy
// has a failure Mode: Open admits unenforced, Closed refuses with an
// *UnavailableError (503), and Local enforces in process memory, continuing each
// key from its last shared answer, never from a fresh bucket. Permanent errors (ErrPermanent) never become "allowed", in any mode.
//
//	store, err := resilient.New(shared, resilient.WithPolicyMode("login", resilient.Closed))
//	if err != nil {
//		return err
//	}
//	defer store.Close() // stops the Store's prober goroutine and closes shared
//
// Breakers, deadlines, metrics and over-grant bounds: docs/failure.md.
package resilient
