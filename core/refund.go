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
	// Result.DecidedAt of the admission; for a leaky bucket's queued request, when
	// its slot began: DecidedAt plus Delay, less the millisecond Delay is rounded up
	// by), as if that much of the admission had not been spent. Buckets and queues
	// get back what of it they have not refilled since chargedAt, at the store's now,
	// never beyond what a fresh key has: a charge the bucket has earned again by
	// refilling, given back too, would be spent twice. Window algorithms give it back
	// to the window that counted the charge, and nothing once that window no longer
	// counts, so a refund made after a later charge opened a new window cannot add to
	// that one. A zero chargedAt (an instant not known) gives windows nothing back,
	// and buckets and queues the whole cost. Concurrency leases end with
	// Store.Release.
	Refund(ctx context.Context, req Request, chargedAt time.Time) error
}
