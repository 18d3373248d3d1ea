package httplimit

import "github.com/go-ratelimit/ratelimit/core/httpengine"

// Fields selects the rate-limit header fields responses carry (WithFields).
type Fields = httpengine.Fields

const (
	// NoFields writes no rate-limit fields (Retry-After is still sent on a
	// refusal).
	NoFields Fields = httpengine.NoFields
	// IETFFields, the default, writes RateLimit-Policy and RateLimit in the
	// structured-field form of draft-ietf-httpapi-ratelimit-headers (drafts 08 to
	// 11), one list member per policy in stack order:
	//
	//	RateLimit-Policy: "api";q=20;w=2
	//	RateLimit: "api";r=7;t=1
	//
	// q is the policy's quota (core.Policy.Capacity) and w its window in whole
	// seconds, rounded up (core.Policy.Window, at least 1); a concurrency policy
	// sends qu="concurrent-requests" instead of w, as its quota is the number of
	// requests in flight. r is the remaining quota and t the whole seconds,
	// rounded up, until the quota is restored, never more than w; for a policy
	// that refused the request, t is when it admits the request again (at most w:
	// Retry-After carries the exact wait). A concurrency policy's member has no t
	// unless it refused the request (then t is its short Retry-After): its quota
	// comes back as requests in flight end, not after a time. When limiters are
	// nested, the response carries one member per policy of the merged decision.
	//
	// Field values are shared between responses (precomputed, repeated, or carved
	// from shared chunks, so that responses allocate nothing for them): replace a
	// field with Header.Set, never modify its value slice in place.
	IETFFields Fields = httpengine.IETFFields
	// LegacyFields writes X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset for the most restrictive policy of the stack
	// (core.MostRestrictive). X-RateLimit-Reset is delta-seconds, not a Unix
	// timestamp: the seconds from now until the policy has fully recovered
	// (core.Result.ResetAfter, rounded up). The IETF field's t is the same number
	// capped at the policy's window; a sliding window can take two. (For a
	// concurrency policy that admitted, ResetAfter is when its leases would all
	// lapse unreleased: the lease timeout after an admission.)
	LegacyFields Fields = httpengine.LegacyFields
)
