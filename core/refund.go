package core

import "context"

// Refunder is implemented by stores that can give back cost an admitted request
// spent, for costs that are settled after the handler ran (for example nothing is
// charged when the response says the work was not done). It is optional: adapters
// check for it and report an error at construction when a refund is configured on
// a store without it.
type Refunder interface {
	// Refund gives back req's effective cost to req's key at the store's now, as if
	// that much of an admission had not been spent. It never fills a bucket or
	// empties a queue beyond what a fresh key has, and gives nothing back to a
	// window that no longer counts. Concurrency leases end with Store.Release.
	Refund(ctx context.Context, req Request) error
}
