package core

import (
	"context"
	"time"
)

// Refunder is implemented by stores that can give back cost an admitted request
// spent, for costs that are settled after the handler ran (for example nothing is
// charged when the response says the work was not done). It is optional: adapters
// check for it and report an error at construction when a refund is configured on
// a store without it.
type Refunder interface {
	// Refund gives back req's effective cost to req's key, charged at chargedAt (the
	// Result.DecidedAt of the admission), as if that much of the admission had not
	// been spent. Buckets and queues get it back at the store's now, never beyond
	// what a fresh key has. Window algorithms give it back to the window that
	// counted the charge, and nothing once that window no longer counts, so a
	// refund made after a later charge opened a new window cannot add to that one.
	// A zero chargedAt gives windows nothing back. Concurrency leases end with
	// Store.Release.
	Refund(ctx context.Context, req Request, chargedAt time.Time) error
}
