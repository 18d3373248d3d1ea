package reserve

import (
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// DefaultLifetime is how long a lease lives when Lease.Lifetime is zero.
const DefaultLifetime = time.Second

// MaxLifetime bounds Lease.Lifetime: a lease parks budget on one replica for as long
// as it lives.
const MaxLifetime = 24 * time.Hour

// Lease opts one policy in to leasing: a replica takes Size units of the policy's
// budget for a key from the backing store in one decision, spends them in process
// memory, and returns what it did not spend when Lifetime ends. (A slice of budget:
// not the concurrency limiter's lease of core.Request.Lease, a slot in flight.)
//
// A lease applies to requests whose policy has exactly this policy's ID (its name
// and parameters): a policy with the same name and other parameters (a tenant's
// new plan) is not leased, and passes through to the backing store exactly.
type Lease struct {
	// Policy is the policy that may be leased. Token bucket, GCRA, fixed window,
	// sliding window and sliding log policies can be; leaky bucket (its admissions
	// wait for a slot in a shared queue) and concurrency (its leases are released one
	// by one) cannot.
	Policy core.Policy
	// Size is how much budget one lease takes: from 1 to the policy's Capacity. The
	// overage bound grows with it (see the package documentation).
	Size int64
	// Lifetime is how long a lease's unspent balance may be held before it is
	// returned to the backing store: from 1ms to MaxLifetime; zero means
	// DefaultLifetime. A fixed window
	// policy's lease also ends with the window it was taken in.
	Lifetime time.Duration
}

// leasable reports whether leasing is defined for an algorithm, and why not.
func leasable(a core.Algorithm) (bool, string) {
	switch a {
	case core.TokenBucket, core.GCRA, core.FixedWindow, core.SlidingWindow, core.SlidingLog:
		return true, ""
	case core.LeakyBucket:
		return false, "a leaky bucket admits into a shared queue and tells each request how long to wait for its slot, which a replica cannot decide alone"
	case core.Concurrency:
		return false, "concurrency slots are held and released one request at a time, not spent"
	default:
		return false, "unknown algorithm"
	}
}

// check validates the lease and fills its defaults. Errors name the policy.
func (l Lease) check() (Lease, error) {
	if !l.Policy.Valid() {
		return l, fmt.Errorf("reserve: %w: a lease of the zero Policy; build policies with core.NewPolicy", core.ErrInvalidPolicy)
	}
	name := l.Policy.Name()
	if ok, why := leasable(l.Policy.Algorithm()); !ok {
		return l, fmt.Errorf("reserve: %w %q: %s policies cannot be leased: %s", core.ErrInvalidPolicy, name, l.Policy.Algorithm(), why)
	}
	if l.Size < 1 || l.Size > l.Policy.Capacity() {
		return l, fmt.Errorf("reserve: %w %q: lease size %d is outside 1..%d (the policy's capacity)", core.ErrInvalidPolicy, name, l.Size, l.Policy.Capacity())
	}
	switch {
	case l.Lifetime == 0:
		l.Lifetime = DefaultLifetime
	case l.Lifetime < time.Millisecond:
		return l, fmt.Errorf("reserve: %w %q: lease lifetime %v is shorter than 1ms", core.ErrInvalidPolicy, name, l.Lifetime)
	case l.Lifetime > MaxLifetime:
		return l, fmt.Errorf("reserve: %w %q: lease lifetime %v is longer than %v", core.ErrInvalidPolicy, name, l.Lifetime, MaxLifetime)
	}
	return l, nil
}
