package memory

import "github.com/go-ratelimit/ratelimit/core/internal/transition"

// minLogArray is the capacity of a sliding log's first array.
const minLogArray = 8

// shortLog is the length up to which a log at the end of its array is moved back
// to the start whatever the gap in front: copying so few entries costs less than
// a larger array.
const shortLog = 8

// makeRoomInLog makes room past the end of the sliding log in e.state.Log for the
// one entry an admission appends, so that the transition appends in place. Requires
// e.mu and a sliding-log policy.
//
// The transition drops aged-out entries from the front of the log and appends past
// its end, so under steady traffic the log drifts towards the end of its array.
// Only when it gets there is it moved: back to the start of the array (e.logArray)
// when the gap in front is at least its length, else into an array twice as large,
// but never larger than twice the policy's limit (a log holds at most Limit
// entries, so from that size on it is always moved back). A move back copies no
// more entries than have aged out since the last move: O(1) per decision,
// amortized, however long the log. Arrays only grow, as the log does, so steady
// traffic allocates nothing.
func (e *entry) makeRoomInLog() {
	log := e.state.Log
	if len(log) < cap(log) {
		return
	}
	var array []transition.LogEntry
	if e.logArray != nil {
		array = *e.logArray
	}
	gap, inArray := offsetIn(array, log)
	switch {
	case inArray && gap > 0 && (gap >= len(log) || len(log) <= shortLog):
		e.state.Log = array[:copy(array, log)]
		return
	case !inArray && cap(array) > len(log):
		// The log is a copy (a refund's) or empty: the array is free for it.
		e.state.Log = array[:copy(array, log)]
		return
	}
	size := max(minLogArray, 2*len(log))
	if inArray {
		size = max(size, 2*cap(array))
	}
	size = max(len(log)+1, int(min(int64(size), 2*e.policy.Limit())))
	grown := make([]transition.LogEntry, size)
	e.logArray = &grown
	e.state.Log = grown[:copy(grown, log)]
}

// offsetIn reports where log starts in array, when log is a window of array that
// reaches its end (as a log with no room left past its end does).
func offsetIn(array, log []transition.LogEntry) (int, bool) {
	if cap(log) == 0 || cap(log) > cap(array) {
		return 0, false
	}
	if &array[:cap(array)][cap(array)-1] != &log[:cap(log)][cap(log)-1] {
		return 0, false
	}
	return cap(array) - cap(log), true
}
