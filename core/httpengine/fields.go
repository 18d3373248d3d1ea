package httpengine

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Fields selects the rate-limit header fields a Limiter writes (see
// httplimit.Fields).
type Fields uint8

// The field sets (see httplimit.IETFFields).
const (
	NoFields   Fields = 0         // none; Retry-After is still sent on a refusal
	IETFFields Fields = 1 << iota // RateLimit-Policy and RateLimit
	// LegacyFields: X-RateLimit-Limit, -Remaining and -Reset (delta-seconds).
	LegacyFields
)

// Canonical header keys, so that fields are set on the map directly.
const (
	headerPolicy          = "Ratelimit-Policy"
	headerRateLimit       = "Ratelimit"
	headerRetryAfter      = "Retry-After"
	headerLegacyLimit     = "X-Ratelimit-Limit"
	headerLegacyRemaining = "X-Ratelimit-Remaining"
	headerLegacyReset     = "X-Ratelimit-Reset"
	headerContentType     = "Content-Type"
)

// ceilSeconds is d in whole seconds, rounded up; negative durations count as 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// maxFieldInteger is the largest integer a structured field holds (RFC 8941: at
// most 15 digits). A window policy's limit may reach 2^53; a larger quota or
// remainder is shown as this, "at least", rather than making the whole field
// unparsable.
const maxFieldInteger = 999_999_999_999_999

// policyMember appends p's RateLimit-Policy member: "name";q=Q;w=W, or
// "name";q=Q;qu="concurrent-requests" for a concurrency policy, whose quota is a
// number of requests in flight rather than per window.
func policyMember(buf []byte, p *core.Policy) []byte {
	buf = append(buf, '"')
	buf = append(buf, p.Name()...) // names hold only [A-Za-z0-9_.:-]: nothing to escape
	buf = append(buf, `";q=`...)
	buf = strconv.AppendInt(buf, min(p.Capacity(), maxFieldInteger), 10)
	if p.Algorithm() == core.Concurrency {
		return append(buf, `;qu="concurrent-requests"`...)
	}
	buf = append(buf, ";w="...)
	return strconv.AppendInt(buf, windowSeconds(p), 10)
}

// windowSeconds is the w of p: its window in whole seconds, rounded up, at least 1.
func windowSeconds(p *core.Policy) int64 { return max(1, ceilSeconds(p.Window())) }

// resetSeconds is the t of a result: when a refusing policy admits the request, or
// when an admitting one has fully recovered.
func resetSeconds(res *core.Result) int64 {
	if refused(res) {
		return max(1, ceilSeconds(res.RetryAfter))
	}
	return ceilSeconds(res.ResetAfter)
}

// shownRemaining is the r (and X-RateLimit-Remaining) of a result: its Remaining,
// at least zero and at most the quota q. An idle leaky bucket admits one request
// beyond its burst at once (a request in service and a full queue), which a client
// reading q would take for a mistake.
func shownRemaining(res *core.Result) int64 { return min(max(0, res.Remaining), res.Limit) }

// refused reports whether the policy of res refused the request itself (rather than
// admitting it within a stack that another policy refused).
func refused(res *core.Result) bool { return !res.Allowed && res.RetryAfter > 0 }

// rateLimitMember appends res's RateLimit member: "name";r=R;t=T. t never exceeds
// the w of p's RateLimit-Policy member: a sliding window's estimate can take up to
// two periods to recover fully, and a client reads t within the window the policy
// announces (Retry-After still says the exact wait of a refusal).
//
// A concurrency policy's member has no t unless the policy refused the request:
// its quota comes back when requests in flight end, at no time the server knows,
// and t, which the draft makes optional, says when more quota is available. Its
// ResetAfter is when the last lease would lapse if never released (the lease
// timeout, for an admission): sent as t, a client reading "r=0;t=60" on the last
// slot held off for a minute. A refusal's t is its short Retry-After.
func rateLimitMember(buf []byte, res *core.Result, p *core.Policy) []byte {
	buf = append(buf, '"')
	buf = append(buf, res.Policy...)
	buf = append(buf, `";r=`...)
	buf = strconv.AppendInt(buf, min(shownRemaining(res), maxFieldInteger), 10)
	if p.Algorithm() == core.Concurrency {
		if !refused(res) {
			return buf
		}
		return strconv.AppendInt(append(buf, ";t="...), resetSeconds(res), 10)
	}
	buf = append(buf, ";t="...)
	return strconv.AppendInt(buf, min(resetSeconds(res), windowSeconds(p)), 10)
}

// single returns a header value slice of one element. Its capacity is one, so a
// later Header.Add on a shared value copies it instead of writing into it.
func single(v string) []string { return []string{v} }

// writeFields sets the rate-limit fields of the decided ticket on h: those its
// Limiter writes, and, for a merged decision, those of the Limiters merged into
// it, so that no field an outer one wrote keeps its numbers from before the merge.
// others are the request's decisions by Limiters on other stores (see
// scope.separate), outermost first: they decided separately, so the fields list
// the policies of those that write the same fields, before t's own, rather than
// hide them.
func (l *Limiter) writeFields(t *Ticket, h http.Header, others []*Ticket) {
	if t.fields&IETFFields != 0 {
		// alone: the fields hold t's own policies, whose values the Limiter caches.
		alone := !t.merged && !writesAlso(others, IETFFields)
		if alone && l.policyField != nil {
			h[headerPolicy] = l.policyField
		} else {
			buf := appendLayers(t.buf[:0], others, t, false)
			h[headerPolicy] = t.values.value(buf)
			t.keepScratch(buf)
		}
		h[headerRateLimit] = l.rateLimitField(t, others, alone)
	}
	if t.fields&LegacyFields != 0 {
		res := &t.results[core.MostRestrictive(t.results)]
		for _, o := range others {
			if o.fields&LegacyFields != 0 {
				res = moreRestrictive(res, &o.results[core.MostRestrictive(o.results)])
			}
		}
		h[headerLegacyLimit] = t.number(res.Limit, &t.legacyMemo[0])
		h[headerLegacyRemaining] = t.number(shownRemaining(res), &t.legacyMemo[1])
		h[headerLegacyReset] = t.number(resetSeconds(res), &t.legacyMemo[2])
	}
}

// writesAlso reports whether one of others writes the field set f.
func writesAlso(others []*Ticket, f Fields) bool {
	for _, o := range others {
		if o.fields&f != 0 {
			return true
		}
	}
	return false
}

// appendLayers appends the IETF members of every layer to a field value: those of
// others that write the IETF fields, outermost first, then t's (see appendMembers).
func appendLayers(buf []byte, others []*Ticket, t *Ticket, results bool) []byte {
	for _, o := range others {
		if o.fields&IETFFields != 0 {
			buf = appendMembers(buf, o, results)
		}
	}
	return appendMembers(buf, t, results)
}

// appendMembers appends the members of t's policies to a field value: their
// RateLimit-Policy members, or with results their RateLimit members, after a
// separating ", " when buf holds members already.
func appendMembers(buf []byte, t *Ticket, results bool) []byte {
	for i := range t.reqs {
		k := i
		if t.merged {
			if k = shownFor(t.results, i); k < 0 {
				continue
			}
		}
		if len(buf) > 0 {
			buf = append(buf, ", "...)
		}
		if results {
			buf = rateLimitMember(buf, &t.results[k], &t.reqs[k].Policy)
		} else {
			buf = policyMember(buf, &t.reqs[k].Policy)
		}
	}
	return buf
}

// shownFor is the index of the result that stands for the policy of results[i],
// where the policy first appears, or -1 where it appears again: a merged decision
// may charge a policy under several keys (declared at two levels with different
// key functions), and the fields, the problem body and the observers' counts
// (Event.Shown) show each policy once, as the bucket that constrains the client
// most (the first of equals).
func shownFor(results []core.Result, i int) int {
	name := results[i].Policy
	for j := range i {
		if results[j].Policy == name {
			return -1
		}
	}
	k := i
	for j := i + 1; j < len(results); j++ {
		if results[j].Policy == name && moreRestrictive(&results[k], &results[j]) != &results[k] {
			k = j
		}
	}
	return k
}

// moreRestrictive is whichever of a and b constrains the client more, a on a tie
// (as core.MostRestrictive picks among results).
func moreRestrictive(a, b *core.Result) *core.Result {
	pair := [2]core.Result{*a, *b}
	if core.MostRestrictive(pair[:]) == 1 {
		return b
	}
	return a
}

// rateLimitField is the RateLimit value of t's results, after those of others:
// the ticket's last one when t stands alone and shows the same numbers (static
// stacks), or built afresh.
func (l *Limiter) rateLimitField(t *Ticket, others []*Ticket, alone bool) []string {
	if alone {
		if value := t.fieldMemo.lookup(t.results); value != nil {
			return value
		}
	}
	buf := appendLayers(t.buf[:0], others, t, true)
	t.keepScratch(buf)
	value := t.values.value(buf)
	if alone {
		t.fieldMemo.remember(t.results, value)
	}
	return value
}

// maxCachedSeconds is the largest number (of seconds, mostly) precomputed per Limiter.
const maxCachedSeconds = 120

// secondsFields precomputes the header values "0" to "maxCachedSeconds".
func secondsFields() [][]string {
	fields := make([][]string, maxCachedSeconds+1)
	for i := range fields {
		fields[i] = single(strconv.Itoa(i))
	}
	return fields
}
