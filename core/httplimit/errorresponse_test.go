package httplimit

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
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
		status, retry, _ := ErrorResponse(c.err)
		if status != http.StatusServiceUnavailable || retry != c.retry {
			t.Errorf("%v: %d Retry-After %d, want 503 and %d", c.err, status, retry, c.retry)
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
