package httpengine

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Fields selects the rate-limit header fields a Limiter writes.
type Fields uint8

const (
	// NoFields writes no rate-limit fields (Retry-After is still sent on a refusal).
	NoFields Fields = 0
	// IETFFields writes RateLimit-Policy and RateLimit in the structured-field form of
	// draft-ietf-httpapi-ratelimit-headers (drafts 08 to 11), one list member per
	// policy in stack order:
	//
	//	RateLimit-Policy: "api";q=20;w=2
	//	RateLimit: "api";r=7;t=1
	//
	// q is the policy's quota (core.Policy.Capacity) and w its window in whole
	// seconds, rounded up (core.Policy.Window, at least 1); a concurrency policy
	// sends qu="concurrent-requests" instead of w, as its quota is the number of
	// requests in flight. r is the remaining quota and t the whole seconds, rounded
	// up, until the quota is restored, never more than w; for a policy that refused
	// the request, t is when it admits the request again (at most w: Retry-After
	// carries the exact wait). When Limiters are nested, the response carries one
	// member per policy of the merged decision.
	//
	// Field values are shared between responses (precomputed, repeated, or carved
	// from shared chunks, so that responses allocate nothing for them): replace a
	// field with Header.Set, never modify its value slice in place.
	IETFFields Fields = 1 << iota
	// LegacyFields writes X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset for the most restrictive policy of the stack
	// (core.MostRestrictive). X-RateLimit-Reset is delta-seconds: the number of
	// seconds from now until the reset (its t), not a Unix timestamp.
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

// policyMember appends p's RateLimit-Policy member: "name";q=Q;w=W, or
// "name";q=Q;qu="concurrent-requests" for a concurrency policy, whose quota is a
// number of requests in flight rather than per window.
func policyMember(buf []byte, p *core.Policy) []byte {
	buf = append(buf, '"')
	buf = append(buf, p.Name()...) // names hold only [A-Za-z0-9_.:-]: nothing to escape
	buf = append(buf, `";q=`...)
	buf = strconv.AppendInt(buf, p.Capacity(), 10)
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

// refused reports whether the policy of res refused the request itself (rather than
// admitting it within a stack that another policy refused).
func refused(res *core.Result) bool { return !res.Allowed && res.RetryAfter > 0 }

// rateLimitMember appends res's RateLimit member: "name";r=R;t=T. t never exceeds
// the w of p's RateLimit-Policy member: a sliding window's estimate can take up to
// two periods to recover fully, and a client reads t within the window the policy
// announces (Retry-After still says the exact wait of a refusal).
func rateLimitMember(buf []byte, res *core.Result, p *core.Policy) []byte {
	buf = append(buf, '"')
	buf = append(buf, res.Policy...)
	buf = append(buf, `";r=`...)
	buf = strconv.AppendInt(buf, max(0, res.Remaining), 10)
	buf = append(buf, ";t="...)
	reset := resetSeconds(res)
	if p.Algorithm() != core.Concurrency {
		reset = min(reset, windowSeconds(p))
	}
	return strconv.AppendInt(buf, reset, 10)
}

// single returns a header value slice of one element. Its capacity is one, so a
// later Header.Add on a shared value copies it instead of writing into it.
func single(v string) []string { return []string{v} }

// writeFields sets the rate-limit fields of the decided ticket on h.
func (l *Limiter) writeFields(t *Ticket, h http.Header) {
	if l.fields&IETFFields != 0 {
		if l.policyField != nil && !t.merged {
			h[headerPolicy] = l.policyField
		} else {
			buf := t.buf[:0]
			for i := range t.reqs {
				if i > 0 {
					buf = append(buf, ", "...)
				}
				buf = policyMember(buf, &t.reqs[i].Policy)
			}
			h[headerPolicy] = t.values.value(buf)
			t.keepScratch(buf)
		}
		h[headerRateLimit] = l.rateLimitField(t)
	}
	if l.fields&LegacyFields != 0 {
		res := &t.results[core.MostRestrictive(t.results)]
		h[headerLegacyLimit] = t.number(res.Limit, &t.legacyMemo[0])
		h[headerLegacyRemaining] = t.number(max(0, res.Remaining), &t.legacyMemo[1])
		h[headerLegacyReset] = t.number(resetSeconds(res), &t.legacyMemo[2])
	}
}

// rateLimitField is the RateLimit value of t's results: the ticket's last one
// when they show the same numbers (static stacks), or built afresh.
func (l *Limiter) rateLimitField(t *Ticket) []string {
	if !t.merged { // a merged decision's policies are not the memo's
		if value := t.fieldMemo.lookup(t.results); value != nil {
			return value
		}
	}
	buf := t.buf[:0]
	for i := range t.results {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = rateLimitMember(buf, &t.results[i], &t.reqs[i].Policy)
	}
	t.keepScratch(buf)
	value := t.values.value(buf)
	if !t.merged {
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
