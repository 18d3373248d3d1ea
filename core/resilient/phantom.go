package resilient

import (
	"errors"

	"github.com/go-ratelimit/ratelimit/core"
)

// Concurrency leases the shared store may hold though the call that acquired them
// failed: a phantom of the lease, which its request never releases there.

// mayHaveLanded reports whether a call that ended with o and err may have reached
// the shared store: it timed out, failed or was cancelled once sent. A call the
// guard did not send (ErrOverload, ErrClosed) did not, nor did one the store
// answered with a permanent error.
func mayHaveLanded(o outcome, err error) bool {
	return (o == canceled || o == failed) && !errors.Is(err, ErrOverload) && !errors.Is(err, ErrClosed)
}

// acquiresUnsure is called when the call that carried the concurrency acquires of
// reqs ended with o and err, before the requests are decided without the shared
// store; it returns the function to call once they are decided (at once when none
// will be). A call that may have landed left their leases on the shared store, and
// their requests' releases will not go there: a timed-out acquire held a slot there
// for the lease timeout after every request had ended, 2 of 2 for nothing
// (TestTimedOutAcquireLeavesNoPhantom). A lease that a failure mode grants is
// remembered as one the shared store may hold too (leaseBook.add): it is released
// there once its request ends (its hand-over acquires it there under its ID, which
// holds it once); released at once, it could be the lease handed over under the
// same ID, and the key over-granted. The others, refused, failed closed or
// cancelled, or not remembered by a full book, are released there at once
// (endedAt), as leases whose requests ended.
func (s *Store) acquiresUnsure(reqs []core.Request, o outcome, err error, now int64) (decided func()) {
	if !mayHaveLanded(o, err) {
		return func() {}
	}
	var marked []int
	for i := range reqs {
		if reqs[i].Policy.Algorithm() == core.Concurrency && reqs[i].Lease != 0 {
			s.leases.mayHold(leaseKey{reqs[i].Policy.ID(), reqs[i].Key, reqs[i].Lease})
			marked = append(marked, i)
		}
	}
	return func() {
		for _, i := range marked {
			if s.leases.unsure(leaseKey{reqs[i].Policy.ID(), reqs[i].Key, reqs[i].Lease}) {
				s.endedAt(&reqs[i], reqs[i].Lease, now)
			}
		}
	}
}
