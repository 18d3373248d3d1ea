// Package resilient keeps a rate limiter deciding when its shared store (Redis)
// fails. Its Store, a core.Store, wraps the shared one and owns it. Each policy
// has a failure Mode: Open admits unenforced, Closed refuses with an
// *UnavailableError (503), and Local enforces in process memory from each key's
// last shared answer. Permanent errors (ErrPermanent) are never "allowed".
//
//	store, err := resilient.New(shared, resilient.WithPolicyMode("login", resilient.Closed))
//	if err != nil {
//		return err
//	}
//	defer store.Close() // stops the Store's prober goroutine and closes shared
//
// Breakers, deadlines, metrics and over-grant bounds: docs/failure.md.
package resilient
