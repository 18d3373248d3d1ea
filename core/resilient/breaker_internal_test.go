package resilient

import (
	"testing"
	"time"
)

// TestBreakerStateMachine walks the breaker through every transition at fixed
// instants (nanoseconds): threshold 3, cooldown 100.
func TestBreakerStateMachine(t *testing.T) {
	b := newBreaker(3, 100*time.Nanosecond)
	type step struct {
		at      int64
		probe   bool    // the ticket the call holds is a probe (else an ordinary one)
		outcome outcome // -1: only ask allow
		allowed bool    // what allow answers at this instant (for outcome -1)
		want    BreakerState
		tr      string // the transition reported, "" for none
	}
	ordinary := ticket{allowed: true}
	probe := ticket{allowed: true, probe: true}
	steps := []step{
		{at: 0, outcome: failed, want: BreakerClosed},
		{at: 1, outcome: failed, want: BreakerClosed},
		{at: 2, outcome: succeeded, want: BreakerClosed}, // resets the count
		{at: 3, outcome: failed, want: BreakerClosed},
		{at: 4, outcome: failed, want: BreakerClosed},
		{at: 5, outcome: canceled, want: BreakerClosed}, // a client that went away counts nothing
		{at: 6, outcome: broken, want: BreakerClosed},   // the store answered: reachable, resets
		{at: 7, outcome: failed, want: BreakerClosed},
		{at: 8, outcome: failed, want: BreakerClosed},
		{at: 9, outcome: failed, want: BreakerOpen, tr: "closed>open after 3"},
		{at: 10, outcome: succeeded, want: BreakerOpen}, // a late answer of an ordinary call changes nothing
		{at: 50, outcome: -1, allowed: false, want: BreakerOpen},
		{at: 108, outcome: -1, allowed: false, want: BreakerOpen},
		{at: 109, outcome: -1, allowed: true, want: BreakerHalfOpen, tr: "open>half-open"}, // the probe
		{at: 110, outcome: -1, allowed: false, want: BreakerHalfOpen},                      // one probe at a time
		{at: 120, probe: true, outcome: failed, want: BreakerOpen, tr: "half-open>open"},
		{at: 219, outcome: -1, allowed: false, want: BreakerOpen},
		{at: 220, outcome: -1, allowed: true, want: BreakerHalfOpen, tr: "open>half-open"},
		{at: 221, probe: true, outcome: canceled, want: BreakerHalfOpen}, // frees the probe slot
		{at: 222, outcome: -1, allowed: true, want: BreakerHalfOpen},     // the next caller probes
		{at: 223, outcome: failed, want: BreakerHalfOpen},                // an ordinary late failure changes nothing
		{at: 230, probe: true, outcome: succeeded, want: BreakerClosed, tr: "half-open>closed after 221ns"},
		{at: 231, outcome: failed, want: BreakerClosed}, // counting starts afresh
		{at: 232, outcome: failed, want: BreakerClosed},
		{at: 233, outcome: failed, want: BreakerOpen, tr: "closed>open after 3"},
		{at: 333, outcome: -1, allowed: true, want: BreakerHalfOpen, tr: "open>half-open"},
		{at: 334, probe: true, outcome: broken, want: BreakerClosed, tr: "half-open>closed after 101ns"}, // reachable
	}
	for i, s := range steps {
		var tr *transition
		if s.outcome == -1 {
			var tk ticket
			tk, tr = b.allow(s.at)
			if tk.allowed != s.allowed {
				t.Fatalf("step %d at %d: allow = %v, want %v", i, s.at, tk.allowed, s.allowed)
			}
		} else {
			tk := ordinary
			if s.probe {
				tk = probe
			}
			tr = b.done(tk, s.outcome, s.at)
		}
		if got := b.current(); got != s.want {
			t.Fatalf("step %d at %d: state %v, want %v", i, s.at, got, s.want)
		}
		if got := describe(tr); got != s.tr {
			t.Fatalf("step %d at %d: transition %q, want %q", i, s.at, got, s.tr)
		}
	}
}

func describe(tr *transition) string {
	if tr == nil {
		return ""
	}
	s := tr.from.String() + ">" + tr.to.String()
	switch {
	case tr.failures > 0:
		s += " after " + string(rune('0'+tr.failures))
	case tr.to == BreakerClosed:
		s += " after " + tr.after.String()
	}
	return s
}

// An ordinary call's ticket in the closed state is allowed without the lock, and a
// denied ticket's outcome changes nothing.
func TestBreakerIgnoresDeniedTickets(t *testing.T) {
	b := newBreaker(1, time.Second)
	b.done(ticket{allowed: true}, failed, 0)
	if b.current() != BreakerOpen {
		t.Fatal("one failure with threshold 1 did not open")
	}
	if tr := b.done(ticket{}, succeeded, 1); tr != nil || b.current() != BreakerOpen {
		t.Fatalf("a denied ticket changed the breaker: %v %v", tr, b.current())
	}
}

// RetryAfter is the time left until the next probe while open, else one cooldown.
func TestBreakerRetryAfter(t *testing.T) {
	b := newBreaker(1, 100*time.Millisecond)
	if got := b.retryAfter(0); got != 100*time.Millisecond {
		t.Fatalf("closed: %v", got)
	}
	b.done(ticket{allowed: true}, failed, 0)
	if got := b.retryAfter(int64(30 * time.Millisecond)); got != 70*time.Millisecond {
		t.Fatalf("open, 30ms in: %v, want 70ms", got)
	}
}
