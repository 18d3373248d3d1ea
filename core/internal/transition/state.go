package transition

// State is the stored state of one key under one policy. Each algorithm uses only
// its own fields; the zero State is the state of a key never seen (a full bucket, an
// empty window, no leases). Timestamps are milliseconds since the Unix epoch.
//
// The scalar fields come first and Seen leads them, so that a store can keep every
// field an algorithm writes on each decision within one cache line.
type State struct {
	// Seen reports that the key has state: a bucket that was never touched is full.
	Seen bool
	// Tokens is the token bucket's level in token units (core.Policy.TokenUnit per token).
	Tokens int64
	// Updated is when the token bucket was last refilled. Zero means never: the bucket is full.
	Updated int64
	// TAT is the theoretical arrival time of GCRA and of the leaky bucket's queue.
	TAT FixedTime
	// Window is the index k of the current window [k*period, (k+1)*period) of the
	// fixed and sliding window counters.
	Window int64
	// Count is the cost admitted in the current window (fixed and sliding window), or
	// the cost in the sliding log.
	Count int64
	// Previous is the cost admitted in the window before Window (sliding window).
	Previous int64
	// Log holds the sliding log's admitted requests, oldest first.
	Log []LogEntry
	// Leases holds the concurrency limiter's leases.
	Leases []Lease
}

// LogEntry is one admitted request of a sliding log.
type LogEntry struct {
	At   int64 // when it was admitted (ms)
	Cost int64
}

// Lease is one request in flight under a concurrency policy.
type Lease struct {
	ID      uint64 // chosen by the caller; released by ID
	Cost    int64  // slots it holds
	Expires int64  // when it lapses if never released (ms)
}

// FixedTime is an instant in milliseconds with a fraction: Millis + Frac/RefillPerMilli.
// GCRA and the leaky bucket keep their theoretical arrival time in it so that rates
// finer than one millisecond stay exact. Frac is in [0, core.Policy.RefillPerMilli).
type FixedTime struct {
	Millis int64
	Frac   int64
}
