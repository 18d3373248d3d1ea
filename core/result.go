package core

import "time"

// Result is one policy's decision for one request.
type Result struct {
	// Policy is the name of the policy that decided.
	Policy string
	// Allowed reports whether the request was admitted and charged.
	Allowed bool
	// Limit is the policy's quota: the most cost it admits at once (Policy.Capacity).
	Limit int64
	// Remaining is how many more requests of cost 1 the policy would admit right now
	// (after this one, when it was admitted). Never negative.
	Remaining int64
	// RetryAfter is how long to wait before the same request can be admitted; zero when
	// Allowed. It is never shorter than the true wait and at most 1ms longer.
	RetryAfter time.Duration
	// ResetAfter is how long until the policy has fully recovered for this key.
	ResetAfter time.Duration
	// Delay is how long an admitted leaky-bucket request waits for its slot before it
	// proceeds; zero for every other algorithm.
	Delay time.Duration
	// Lease identifies the concurrency lease an admitted request holds; release it with
	// Store.Release when the request ends.
	Lease uint64
	// DecidedAt is the store's clock when it decided, to the millisecond. A refund of
	// this charge passes it to Refunder.Refund, which gives the cost back to the
	// window the charge was counted in. Zero when no store decided (Unenforced).
	DecidedAt time.Time
	// Unenforced reports that the policy could not be enforced (its store failed and its
	// failure mode admits): the request was let through without being counted. Such a
	// result charged nothing: never refund it.
	Unenforced bool
}

// MostRestrictive picks the result that constrains a client most: among refusals the
// one with the longest RetryAfter; when everything was admitted, the one with the
// fewest Remaining. Ties go to the earlier policy. It returns 0 for an empty slice.
func MostRestrictive(results []Result) int {
	best := 0
	for i := 1; i < len(results); i++ {
		r, b := &results[i], &results[best]
		switch {
		case !r.Allowed && b.Allowed:
			best = i
		case r.Allowed && !b.Allowed:
		case !r.Allowed:
			if r.RetryAfter > b.RetryAfter {
				best = i
			}
		case r.Remaining < b.Remaining:
			best = i
		}
	}
	return best
}
