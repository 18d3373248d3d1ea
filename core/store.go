package core

import (
	"context"
	"errors"
	"fmt"
)

// Store applies decisions to shared state, atomically: each decision is one
// read-decide-write step that no concurrent decision can interleave with. The
// stores of this module decide exactly as the algorithms' pure transitions do
// (core/internal/transition); the conformance suite core/storetest holds them to
// it.
//
// Error contract: an error means the backend failed (or the request was malformed:
// ErrInvalidPolicy, ErrInvalidCost, ErrInvalidKey); it never means "over limit",
// which is a Result with Allowed false. A cancelled or expired ctx is returned as
// ctx.Err(), wrapped. Implementations are safe for concurrent use.
type Store interface {
	// Decide applies one request and returns its policy's result.
	Decide(ctx context.Context, req Request) (Result, error)
	// DecideStack applies several requests as one all-or-nothing decision: every
	// request is charged when all of them are admitted, none otherwise. It writes one
	// Result per request into results (which must have len(reqs)) and reports whether
	// all were admitted. The policies' names must be distinct.
	DecideStack(ctx context.Context, reqs []Request, results []Result) (bool, error)
	// Release ends the concurrency lease that req's admission created. Releasing a
	// lease that has expired or was already released is not an error.
	Release(ctx context.Context, req Request, lease uint64) error
	// Close stops the store's background work and releases its resources.
	Close() error
}

// MaxKeyLength bounds a request key in bytes. Key functions hash anything longer.
const MaxKeyLength = 512

// ErrInvalidKey is returned for a key that is empty or longer than MaxKeyLength.
var ErrInvalidKey = errors.New("ratelimit: invalid key")

// ErrStoreUnavailable is wrapped by store errors caused by the backend being unreachable.
var ErrStoreUnavailable = errors.New("ratelimit: store unavailable")

// Request is one policy applied to one key at one cost.
type Request struct {
	// Policy decides the request; its ID (name and parameters) keys the state.
	Policy Policy
	// Key identifies who is limited (a user, an API key hash, a client IP, …).
	Key string
	// Cost is what the request spends; zero means the policy's default cost
	// (WithDefaultCost).
	Cost int64
	// Lease is the ID to give the lease of an admitted concurrency request. An
	// acquire under the ID of a live lease of its key is admitted and leaves that
	// lease as it was, so a retry after a lost reply holds one slot. 0 is no ID:
	// each such acquire takes a lease of its own.
	Lease uint64
}

// EffectiveCost is the request's cost, or its policy's default when Cost is zero.
func (r *Request) EffectiveCost() int64 {
	if r.Cost == 0 {
		return r.Policy.DefaultCost()
	}
	return r.Cost
}

// Check validates the request: a built policy, a key of 1 to MaxKeyLength bytes and
// a cost the policy can admit. Errors name the policy.
func (r *Request) Check() error {
	if cost := r.EffectiveCost(); r.Policy.spec != nil && cost >= 1 && cost <= r.Policy.capacity &&
		len(r.Key) > 0 && len(r.Key) <= MaxKeyLength {
		return nil // the common case
	}
	if err := r.Policy.CheckCost(r.EffectiveCost()); err != nil {
		return err
	}
	if len(r.Key) == 0 || len(r.Key) > MaxKeyLength {
		return fmt.Errorf("%w: policy %q: key length %d is outside 1..%d", ErrInvalidKey, r.Policy.name, len(r.Key), MaxKeyLength)
	}
	return nil
}

// CheckStack validates a stack before it is decided: at least one request, one
// result per request, every request valid (Request.Check) and no policy named
// twice. Every Store and Store wrapper calls it first in DecideStack, so that all
// of them refuse a malformed stack with the same errors.
func CheckStack(reqs []Request, results []Result) error {
	if len(reqs) == 0 {
		return fmt.Errorf("%w: an empty stack", ErrInvalidPolicy)
	}
	if len(results) != len(reqs) {
		return fmt.Errorf("ratelimit: stack of %d requests given %d results", len(reqs), len(results))
	}
	for i := range reqs {
		if err := reqs[i].Check(); err != nil {
			return err
		}
		for j := 0; j < i; j++ {
			if reqs[j].Policy.Name() == reqs[i].Policy.Name() {
				return fmt.Errorf("%w %q: appears twice in one stack", ErrInvalidPolicy, reqs[i].Policy.name)
			}
		}
	}
	return nil
}
