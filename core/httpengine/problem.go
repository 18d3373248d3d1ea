package httpengine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// ProblemContentType is the media type of every body this package writes: an RFC
// 9457 problem details object.
const ProblemContentType = "application/problem+json"

// ErrStore is wrapped by the error of a request whose store decision failed (the
// backend is unreachable, say). The default error handlers answer it with 503 and
// Retry-After. A failure-mode setting may later turn such errors into decisions.
var ErrStore = errors.New("httplimit: store failed")

// Denial describes a refused request to a deny handler. It is only valid until the
// handler returns.
type Denial struct {
	// Results holds every policy's result, in stack order. The policies that
	// refused have Allowed false and RetryAfter above zero; in a refused stack the
	// others have Allowed false too but were not charged.
	Results []core.Result
	// RetryAfter is the value of the Retry-After field: the longest wait among the
	// refusing policies, rounded up to whole seconds (at least one second).
	RetryAfter time.Duration

	body        []byte   // the default problem body, built on first use
	contentType []string // the Limiter's shared Content-Type value
}

// Violated lists the names of the policies that refused the request.
func (d *Denial) Violated() []string {
	var names []string
	for i := range d.Results {
		if violated(d.Results, i) {
			names = append(names, d.Results[i].Policy)
		}
	}
	return names
}

// violated reports whether the policy of results[i] refused the request, listed
// once, where it first appears (shownFor: one policy charged under two keys, in a
// merged decision, refused by either).
func violated(results []core.Result, i int) bool {
	k := shownFor(results, i)
	return k >= 0 && refused(&results[k])
}

// SetContentType sets h's Content-Type to ProblemContentType, for a deny handler
// that writes Problem. The value is shared: do not modify it in place.
func (d *Denial) SetContentType(h http.Header) {
	if d.contentType != nil {
		h[headerContentType] = d.contentType
		return
	}
	h[headerContentType] = []string{ProblemContentType}
}

// Problem is the default body of the refusal, an RFC 9457 problem details object
// (ProblemContentType) with the extension members retry_after (seconds) and
// violated_policies:
//
//	{"type":"about:blank","title":"Too Many Requests","status":429,
//	 "detail":"Rate limit exceeded; retry in 3 seconds.","retry_after":3,
//	 "violated_policies":["api"]}
//
// The slice is only valid until the deny handler returns.
func (d *Denial) Problem() []byte {
	if len(d.body) > 0 {
		return d.body
	}
	seconds := int64(d.RetryAfter / time.Second)
	b := d.body[:0]
	b = append(b, `{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"Rate limit exceeded; retry in `...)
	b = appendRetryIn(b, seconds)
	b = append(b, `,"violated_policies":[`...)
	first := true
	for i := range d.Results {
		if !violated(d.Results, i) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, d.Results[i].Policy...) // policy names need no JSON escaping
		b = append(b, '"')
	}
	b = append(b, "]}"...)
	d.body = b
	return b
}

// WriteDenial is the default deny handler for net/http: 429 with the problem body.
// The rate-limit fields and Retry-After are already set on w's header.
func WriteDenial(w http.ResponseWriter, d *Denial) {
	d.SetContentType(w.Header())
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(d.Problem())
}

// ErrorResponse is what the default error handlers answer for err: a status, a
// Retry-After in seconds (0: none) and a problem body. The body never contains
// err's text, which may describe the infrastructure.
//
//   - ErrUnidentified: 400, the request lacks the identity it is limited by, or
//     its body cannot be parsed to find it (keyfuncs.ErrBadForm); 413 when the
//     body is over a size limit before the identity is found
//     (keyfuncs.ErrFormTooLarge: net/http's 10 MB for a URL-encoded form, an
//     http.MaxBytesReader's limit, or keyfuncs.MaxJSONBytes for a JSON field).
//     Neither is charged to another name: such a request takes no fallback;
//   - ErrCostTooHigh: 400, the cost function priced the request above what a
//     policy ever admits;
//   - a request whose own context was cancelled before its decision (its client
//     went away, or closed its side of the connection): StatusClientClosedRequest,
//     499, as nginx logs it, so that a client that leaves writes no 5xx into the
//     server's logs and metrics. A server whose BaseContext is cancelled at
//     shutdown answers its waiting requests so too: derive it with
//     context.WithoutCancel, and let Server.Shutdown drain them;
//   - a key function that could not check the identity now (keyfuncs.ErrUnavailable:
//     an API-key validator whose backend is down), ErrStore, or a request past its
//     deadline or otherwise cancelled: 503 with Retry-After: 1, or the whole seconds
//     (rounded up) of the error's hint when it has one (RetryAfterHinter, as a
//     failure mode that fails closed gives), and the same seconds in the body's
//     retry_after and detail, as a refusal's;
//   - anything else (a failing policy or cost function): 500.
func ErrorResponse(err error) (status int, retryAfter int64, body string) {
	switch {
	case errors.Is(err, errClientClosed):
		return StatusClientClosedRequest, 0, problemClientClosed
	case errors.Is(err, keyfuncs.ErrFormTooLarge):
		return http.StatusRequestEntityTooLarge, 0, problemTooLarge
	case errors.Is(err, keyfuncs.ErrUnavailable):
		return unavailable(err)
	case errors.Is(err, ErrUnidentified):
		return http.StatusBadRequest, 0, problemUnidentified
	case errors.Is(err, ErrCostTooHigh):
		return http.StatusBadRequest, 0, problemCostTooHigh
	case errors.Is(err, ErrStore), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return unavailable(err)
	}
	return http.StatusInternalServerError, 0, problemInternal
}

// unavailable is the 503 answer to err, with its hint's Retry-After or 1 second.
func unavailable(err error) (status int, retryAfter int64, body string) {
	retryAfter = 1
	var hinter RetryAfterHinter
	if errors.As(err, &hinter) {
		retryAfter = max(1, int64((hinter.RetryAfterHint()+time.Second-1)/time.Second))
	}
	return http.StatusServiceUnavailable, retryAfter, unavailableProblem(retryAfter)
}

// unavailableProblem is the 503 body, which says when to retry as the 429's does:
//
//	{"type":"about:blank","title":"Service Unavailable","status":503,
//	 "detail":"The rate limiter cannot decide right now; retry in 1 second.","retry_after":1}
func unavailableProblem(seconds int64) string {
	b := make([]byte, 0, 160)
	b = append(b, `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"The rate limiter cannot decide right now; retry in `...)
	return string(append(appendRetryIn(b, seconds), '}'))
}

// appendRetryIn ends a problem body's detail with "N second(s)." and appends its
// retry_after member: `3 seconds.","retry_after":3`.
func appendRetryIn(b []byte, seconds int64) []byte {
	b = strconv.AppendInt(b, seconds, 10)
	if seconds == 1 {
		b = append(b, ` second.","retry_after":`...)
	} else {
		b = append(b, ` seconds.","retry_after":`...)
	}
	return strconv.AppendInt(b, seconds, 10)
}

// RetryAfterHinter is implemented by store errors that know when the store is worth
// asking again (resilient.UnavailableError does).
type RetryAfterHinter interface {
	RetryAfterHint() time.Duration
}

// WriteError is the default error handler for net/http (see ErrorResponse).
func WriteError(w http.ResponseWriter, err error) {
	status, retryAfter, body := ErrorResponse(err)
	h := w.Header()
	h[headerContentType] = []string{ProblemContentType}
	if retryAfter > 0 {
		h[headerRetryAfter] = single(strconv.FormatInt(retryAfter, 10))
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// StatusClientClosedRequest is the status of a request whose client cancelled it
// before its decision: 499, nginx's "Client Closed Request" (no standard status
// says it).
const StatusClientClosedRequest = 499

// The bodies of the default error responses.
const (
	problemClientClosed = `{"type":"about:blank","title":"Client Closed Request","status":499,"detail":"The request ended before the rate limiter decided it."}`
	problemUnidentified = `{"type":"about:blank","title":"Bad Request","status":400,"detail":"The request does not carry the identity this endpoint is rate limited by."}`
	problemTooLarge     = `{"type":"about:blank","title":"Content Too Large","status":413,"detail":"The request body is too large to find the identity this endpoint is rate limited by."}`
	problemCostTooHigh  = `{"type":"about:blank","title":"Bad Request","status":400,"detail":"The request costs more than the rate limit of this endpoint ever admits."}`
	problemInternal     = `{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"The rate limiter could not decide this request."}`
)
