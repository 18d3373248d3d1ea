package httpengine

import (
	"strconv"

	"github.com/go-ratelimit/ratelimit/core"
)

// fieldMemo remembers the last RateLimit value a Ticket built for a static stack,
// with the (r, t) pair of each policy it shows: consecutive responses often repeat
// it (a refused flood with r=0, many keys at the same point of their quota), and a
// repeat is then shared instead of formatted again. Tickets are pooled per
// processor, so the memo costs no writes that other cores read, and no locks.
type fieldMemo struct {
	rt    []int64  // r and t of each policy of the stack, in pairs; nil for a dynamic stack
	value []string // nil before the first value
}

func newFieldMemo(policies int) fieldMemo { return fieldMemo{rt: make([]int64, 2*policies)} }

// lookup returns the remembered value when results show the same (r, t) pairs,
// and nil otherwise.
func (m *fieldMemo) lookup(results []core.Result) []string {
	if m.value == nil || len(m.rt) != 2*len(results) {
		return nil
	}
	for i := range results {
		if m.rt[2*i] != shownRemaining(&results[i]) || m.rt[2*i+1] != memoReset(&results[i]) {
			return nil
		}
	}
	return m.value
}

// remember keeps value as the RateLimit value of results.
func (m *fieldMemo) remember(results []core.Result, value []string) {
	if len(m.rt) != 2*len(results) {
		return
	}
	for i := range results {
		m.rt[2*i], m.rt[2*i+1] = shownRemaining(&results[i]), memoReset(&results[i])
	}
	m.value = value
}

// memoReset is what the memo keeps of a result's t: its resetSeconds, negated for
// a refusal. A static stack's member shows a function of the two (a concurrency
// policy's shows t only for a refusal), so that an admission and a refusal with
// the same seconds never share a value.
func memoReset(res *core.Result) int64 {
	if refused(res) {
		return -resetSeconds(res)
	}
	return resetSeconds(res)
}

// numberMemo remembers the last number beyond the precomputed ones that a Ticket
// wrote in one field (Retry-After, say), and its header value.
type numberMemo struct {
	n     int64
	value []string
}

// number is the header value of a non-negative integer: precomputed up to
// maxCachedSeconds; beyond, the value memo holds when it is the same number, or
// one carved from t's chunks.
func (t *Ticket) number(n int64, memo *numberMemo) []string {
	if n >= 0 && n <= maxCachedSeconds {
		return t.l.secondsFields[n]
	}
	if memo.value != nil && memo.n == n {
		return memo.value
	}
	buf := strconv.AppendInt(t.buf[:0], n, 10)
	t.keepScratch(buf)
	memo.n, memo.value = n, t.values.value(buf)
	return memo.value
}
