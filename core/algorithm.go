package core

import "fmt"

// Algorithm names a rate-limiting algorithm. The values are the names used by the
// reference server's -algorithm flag and by the simulator.
type Algorithm string

// The algorithms. Package core/reference transcribes the exact definition of each
// in rational arithmetic; every store decides as the pure transition of
// core/internal/transition does, one file per algorithm, held to it.
const (
	// TokenBucket holds up to burst tokens, earns limit tokens per period, starts full.
	TokenBucket Algorithm = "token_bucket"
	// GCRA decides exactly as TokenBucket with one number of state (the theoretical arrival time).
	GCRA Algorithm = "gcra"
	// FixedWindow counts cost in windows [k*period, (k+1)*period) aligned to the Unix epoch.
	// It can admit up to twice the limit across a window boundary.
	FixedWindow Algorithm = "fixed_window"
	// SlidingLog remembers every admitted request in the window (t-period, t]: exact, but
	// its memory grows with the limit.
	SlidingLog Algorithm = "sliding_log"
	// SlidingWindow estimates the sliding window from the current and previous fixed windows.
	SlidingWindow Algorithm = "sliding_window"
	// LeakyBucket queues requests and releases them at a steady rate; the queue holds
	// burst×period/limit of waiting time.
	LeakyBucket Algorithm = "leaky_bucket"
	// Concurrency limits the requests in flight at once.
	Concurrency Algorithm = "concurrency"
)

// Algorithms lists every algorithm, rate algorithms first, in a slice of the
// caller's own (a package-level slice could be changed by any importer).
func Algorithms() []Algorithm {
	return []Algorithm{TokenBucket, GCRA, FixedWindow, SlidingLog, SlidingWindow, LeakyBucket, Concurrency}
}

// Valid reports whether a is a known algorithm.
func (a Algorithm) Valid() bool {
	switch a {
	case TokenBucket, GCRA, FixedWindow, SlidingLog, SlidingWindow, LeakyBucket, Concurrency:
		return true
	}
	return false
}

// ParseAlgorithm returns the algorithm named s, or an error listing the known names.
func ParseAlgorithm(s string) (Algorithm, error) {
	a := Algorithm(s)
	if !a.Valid() {
		return "", fmt.Errorf("ratelimit: unknown algorithm %q (known: token_bucket, gcra, fixed_window, sliding_log, sliding_window, leaky_bucket, concurrency)", s)
	}
	return a, nil
}

// short is the algorithm's abbreviation in policy IDs.
func (a Algorithm) short() string {
	switch a {
	case TokenBucket:
		return "tb"
	case GCRA:
		return "gcra"
	case FixedWindow:
		return "fw"
	case SlidingLog:
		return "log"
	case SlidingWindow:
		return "sw"
	case LeakyBucket:
		return "lb"
	case Concurrency:
		return "cc"
	}
	return "?"
}

// usesBurst reports whether the algorithm has a burst distinct from its limit.
func (a Algorithm) usesBurst() bool { return a == TokenBucket || a == GCRA || a == LeakyBucket }
