package httpengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// hintedError is a store failure that knows when to ask again.
type hintedError struct{ after time.Duration }

func (e hintedError) Error() string                 { return "store down" }
func (e hintedError) RetryAfterHint() time.Duration { return e.after }
func (e hintedError) Unwrap() error                 { return core.ErrStoreUnavailable }

func TestErrorResponseUsesTheStoresRetryHint(t *testing.T) {
	cases := []struct {
		err   error
		retry int64
	}{
		{fmt.Errorf("%w: %w", ErrStore, errors.New("plain")), 1},
		{fmt.Errorf("%w: %w", ErrStore, hintedError{2500 * time.Millisecond}), 3},
		{fmt.Errorf("%w: %w", ErrStore, hintedError{10 * time.Millisecond}), 1},
		{fmt.Errorf("%w: %w", ErrStore, hintedError{30 * time.Second}), 30},
	}
	for _, c := range cases {
		status, retry, body := ErrorResponse(c.err)
		if status != http.StatusServiceUnavailable || retry != c.retry {
			t.Errorf("%v: %d Retry-After %d, want 503 and %d", c.err, status, retry, c.retry)
		}
		// The body says when to retry, as a refusal's does.
		var problem struct {
			Status     int    `json:"status"`
			Detail     string `json:"detail"`
			RetryAfter int64  `json:"retry_after"`
		}
		if err := json.Unmarshal([]byte(body), &problem); err != nil {
			t.Fatalf("%v: body %s: %v", c.err, body, err)
		}
		unit := " seconds."
		if c.retry == 1 {
			unit = " second."
		}
		if problem.Status != 503 || problem.RetryAfter != c.retry || !strings.HasSuffix(problem.Detail, "retry in "+strconv.FormatInt(c.retry, 10)+unit) {
			t.Errorf("%v: body %s, want status 503 and retry_after %d in its detail too", c.err, body, c.retry)
		}
	}
}

func TestUnenforcedResultsHaveTheirOwnVerdict(t *testing.T) {
	e := &Event{Allowed: true, Results: []core.Result{{Allowed: true, Unenforced: true}, {Allowed: true}}}
	if v := e.Verdict(0); v != VerdictUnenforced {
		t.Errorf("an unenforced admission: %s", v)
	}
	if v := e.Verdict(1); v != VerdictAllowed {
		t.Errorf("an enforced admission: %s", v)
	}
}

// TestErrorResponseOfUnreadableBodies: a body that cannot be parsed is a bad
// request, one over a size limit is too large; both as the limiter wraps them.
func TestErrorResponseOfUnreadableBodies(t *testing.T) {
	cases := []struct {
		err    error
		status int
	}{
		{fmt.Errorf("%w: policy %q: %w", ErrUnidentified, "account", fmt.Errorf("%w: bad escape", keyfuncs.ErrBadForm)), http.StatusBadRequest},
		{fmt.Errorf("%w: policy %q: %w", ErrUnidentified, "account", fmt.Errorf("%w: 10 MB", keyfuncs.ErrFormTooLarge)), http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		if status, retry, body := ErrorResponse(c.err); status != c.status || retry != 0 || !strings.Contains(body, `"status":`+strconv.Itoa(c.status)) {
			t.Errorf("%v: %d Retry-After %d %s, want %d", c.err, status, retry, body, c.status)
		}
	}
}

// TestErrorResponseOfAnIdentityNotCheckedNow: a key function whose dependency failed
// (an API-key validator's backend) is answered as a failed store, 503 with
// Retry-After, although the limiter wraps it as unidentified.
func TestErrorResponseOfAnIdentityNotCheckedNow(t *testing.T) {
	err := fmt.Errorf("%w: policy %q: %w", ErrUnidentified, "api",
		fmt.Errorf("%w: validating the API key: %w", keyfuncs.ErrUnavailable, errors.New("auth backend down")))
	if status, retry, body := ErrorResponse(err); status != http.StatusServiceUnavailable || retry != 1 || !strings.Contains(body, `"status":503`) {
		t.Errorf("%d Retry-After %d %s, want 503 with Retry-After 1", status, retry, body)
	}
	if reason := ErrorReason(err); reason != ReasonKey {
		t.Errorf("reason %q, want %q: the key function failed", reason, ReasonKey)
	}
}

// 499 is for a request whose own context was cancelled: a context.Canceled that a
// store or a key function returns to a request still live is not the client leaving,
// and a request past its deadline is the server's: both stay 503 with Retry-After.
func TestClientClosedIsTheRequestsOwnCancellation(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	storeErr := fmt.Errorf("%w: policy %q: %w", ErrStore, "api", context.Canceled)
	cases := []struct {
		name  string
		err   error
		want  int
		retry int64
	}{
		{"the client left", endedEarly(cancelled, storeErr), StatusClientClosedRequest, 0},
		{"the client left during the wait", endedEarly(cancelled, cancelled.Err()), StatusClientClosedRequest, 0},
		{"past its deadline", endedEarly(expired, expired.Err()), http.StatusServiceUnavailable, 1},
		{"a store's own cancellation, the client still there", storeErr, http.StatusServiceUnavailable, 1},
		{"a validator's shared lookup cancelled", fmt.Errorf("%w: %w", keyfuncs.ErrUnavailable, context.Canceled), http.StatusServiceUnavailable, 1},
	}
	for _, c := range cases {
		status, retry, _ := ErrorResponse(c.err)
		if status != c.want || retry != c.retry {
			t.Errorf("%s: %d Retry-After %d, want %d and %d", c.name, status, retry, c.want, c.retry)
		}
		if !errors.Is(c.err, context.Canceled) && !errors.Is(c.err, context.DeadlineExceeded) {
			t.Errorf("%s: the error no longer wraps its context's", c.name)
		}
	}
}
