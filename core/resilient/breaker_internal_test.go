package resilient

import (
	"fmt"
	"testing"
	"time"
)

// testBreakerPolicy: window 100ns in buckets of 10ns; at least 4 calls and 2 failures,
// half of the calls failed; probes every 50ns, two good ones in a row close it.
var testBreakerPolicy = breakerPolicy{rate: 0.5, minCalls: 4, minFailures: 2, window: 100, cooldown: 50, probes: 2}

// TestBreakerStateMachine walks the breaker through every transition at fixed
// instants (nanoseconds).
func TestBreakerStateMachine(t *testing.T) {
	b := newBreaker(testBreakerPolicy)
	const (
		record  = iota // an ordinary call ended with outcome; allowed: it asks for a confirming probe
		confirm        // the confirming probe ended: outcome succeeded (reachable) or failed
		due            // ask whether a probe is due; allowed is the answer
		probe          // a probe ended: outcome succeeded (reachable) or failed
	)
	type step struct {
		at      int64
		kind    int
		outcome outcome
		allowed bool
		want    BreakerState
		tr      string // the transition reported, "" for none
	}
	steps := []step{
		{at: 0, kind: record, outcome: failed, want: BreakerClosed},                // 1 call: under minCalls
		{at: 1, kind: record, outcome: succeeded, want: BreakerClosed},             // 2 calls
		{at: 2, kind: record, outcome: failed, want: BreakerClosed},                // 3 calls, not 2 failures in a row
		{at: 3, kind: record, outcome: canceled, want: BreakerClosed},              // a client that went away counts nothing
		{at: 4, kind: due, allowed: false, want: BreakerClosed},                    // no probes while closed
		{at: 5, kind: record, outcome: succeeded, want: BreakerClosed},             // 4 calls, 2 failed: the failure decides, not the success
		{at: 6, kind: record, outcome: broken, want: BreakerClosed},                // reachable: 5 calls
		{at: 7, kind: record, outcome: failed, allowed: true, want: BreakerClosed}, // 3/6 failed: confirm
		{at: 8, kind: record, outcome: failed, want: BreakerClosed},                // one confirming probe at a time
		{at: 9, kind: confirm, outcome: succeeded, want: BreakerClosed},            // it was load: a fresh window
		{at: 10, kind: record, outcome: failed, want: BreakerClosed},
		{at: 11, kind: record, outcome: failed, allowed: true, want: BreakerClosed}, // a quiet window, 2 failures in a row: confirm
		{at: 12, kind: record, outcome: failed, want: BreakerClosed},
		{at: 13, kind: record, outcome: failed, want: BreakerClosed},
		{at: 14, kind: confirm, outcome: failed, want: BreakerOpen, tr: "closed>open 4/4"}, // an outage
		{at: 15, kind: record, outcome: succeeded, want: BreakerOpen},                      // a late answer changes nothing
		{at: 50, kind: due, allowed: false, want: BreakerOpen},
		{at: 64, kind: due, allowed: true, want: BreakerOpen},  // the cooldown has passed
		{at: 65, kind: due, allowed: false, want: BreakerOpen}, // one probe per cooldown
		{at: 66, kind: probe, outcome: failed, want: BreakerOpen},
		{at: 115, kind: due, allowed: false, want: BreakerOpen},
		{at: 116, kind: due, allowed: true, want: BreakerOpen},
		{at: 117, kind: probe, outcome: succeeded, want: BreakerHalfOpen, tr: "open>half-open"},
		{at: 150, kind: due, allowed: false, want: BreakerHalfOpen},
		{at: 167, kind: due, allowed: true, want: BreakerHalfOpen},
		{at: 168, kind: probe, outcome: failed, want: BreakerOpen, tr: "half-open>open"}, // hysteresis: start again
		{at: 218, kind: due, allowed: true, want: BreakerOpen},
		{at: 219, kind: probe, outcome: succeeded, want: BreakerHalfOpen, tr: "open>half-open"},
		{at: 269, kind: due, allowed: true, want: BreakerHalfOpen},
		{at: 270, kind: probe, outcome: succeeded, want: BreakerClosed, tr: "half-open>closed after 256ns"},
		// a fresh window: the outage's failures are forgotten
		{at: 271, kind: record, outcome: failed, want: BreakerClosed},
		{at: 272, kind: record, outcome: succeeded, want: BreakerClosed},
		{at: 273, kind: record, outcome: failed, want: BreakerClosed}, // 3 calls: under minCalls, 1 failure in a row
		{at: 274, kind: record, outcome: failed, allowed: true, want: BreakerClosed},
		{at: 275, kind: confirm, outcome: failed, want: BreakerOpen, tr: "closed>open 3/4"},
	}
	for i, s := range steps {
		var tr *transition
		switch s.kind {
		case record:
			if got := b.record(s.outcome, s.at); got != s.allowed {
				t.Fatalf("step %d at %d: record asks for a confirming probe: %v, want %v", i, s.at, got, s.allowed)
			}
		case confirm:
			tr = b.confirmed(s.outcome == succeeded, s.at)
		case due:
			if got := b.probeDue(s.at); got != s.allowed {
				t.Fatalf("step %d at %d: probeDue = %v, want %v", i, s.at, got, s.allowed)
			}
		case probe:
			tr = b.probed(s.outcome == succeeded, s.at)
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
	case tr.calls > 0:
		s += fmt.Sprintf(" %d/%d", tr.failures, tr.calls)
	case tr.to == BreakerClosed:
		s += " after " + tr.after.String()
	}
	return s
}

// Load is not failure: a steady trickle of slow calls among many good ones never opens
// the breaker, while the same failures among few calls do; old failures leave the
// window.
func TestBreakerFailureRateOverWindow(t *testing.T) {
	b := newBreaker(breakerPolicy{rate: 0.5, minCalls: 10, minFailures: 3, window: 1000, cooldown: 50, probes: 1})
	for at := int64(0); at < 5000; at++ { // one failure in four calls, for 5 windows
		o := succeeded
		if at%4 == 0 {
			o = failed
		}
		if b.record(o, at) {
			t.Fatalf("at %d: 25%% failures asked for a confirming probe", at)
		}
	}
	b = newBreaker(breakerPolicy{rate: 0.5, minCalls: 10, minFailures: 3, window: 1000, cooldown: 50, probes: 1})
	for at := int64(0); at < 9; at++ { // 9 failures, 200 apart, each after two successes
		b.record(succeeded, at*200)
		b.record(succeeded, at*200+1)
		if b.record(failed, at*200+2) {
			t.Fatalf("at %d: failures a third of a busy window asked for a confirming probe", at*200+2)
		}
	}
	asked := false
	for at := int64(2000); at < 2010; at++ {
		asked = b.record(failed, at) || asked
	}
	if !asked {
		t.Fatal("10 failures in a row within a window did not ask for a confirming probe")
	}
}

// A quiet service never fills the window: minFailures failed calls in a row, however
// far apart, ask for the confirming probe; a call the store answered starts the count
// again, and so does a probe that found the store reachable. In a busy window only
// the failure rate decides.
func TestBreakerQuietFailuresInARow(t *testing.T) {
	b := newBreaker(breakerPolicy{rate: 0.5, minCalls: 10, minFailures: 3, window: 1000, cooldown: 50, probes: 1})
	steps := []struct {
		at      int64
		outcome outcome
		confirm bool
	}{
		{0, failed, false},
		{5000, failed, false},    // a window of its own, 2 in a row
		{6000, succeeded, false}, // the store answered: the count starts again
		{7000, failed, false},    //
		{9000, broken, false},    // a permanent error is an answer too
		{11000, failed, false},   //
		{13000, failed, false},   //
		{60000, failed, true},    // 3 in a row, a minute apart
		{60001, failed, false},   // one confirming probe at a time
		{60002, canceled, false}, // a caller that left says nothing
		{60003, failed, false},
	}
	for i, st := range steps {
		if i == 9 {
			b.confirmed(true, st.at) // the store answered the probe: load, a fresh count
		}
		if got := b.record(st.outcome, st.at); got != st.confirm {
			t.Fatalf("step %d at %d: confirm %v, want %v", i, st.at, got, st.confirm)
		}
	}
	if b.record(failed, 60004) || !b.record(failed, 60005) {
		t.Fatal("the count of failures in a row did not start again at the probe's answer")
	}
	busy := newBreaker(breakerPolicy{rate: 0.5, minCalls: 10, minFailures: 3, window: 1000, cooldown: 50, probes: 1})
	for at := int64(0); at < 8; at++ {
		busy.record(succeeded, at)
	}
	for at := int64(8); at < 12; at++ { // 4 failures in a row among 12 calls: a third
		if busy.record(failed, at) {
			t.Fatalf("at %d: failures in a row in a busy window asked for a confirming probe below the rate", at)
		}
	}
}

// RetryAfter is the time left until the next probe while open, else one cooldown.
func TestBreakerRetryAfter(t *testing.T) {
	b := newBreaker(breakerPolicy{rate: 0.5, minCalls: 1, minFailures: 1, window: int64(time.Second), cooldown: int64(100 * time.Millisecond), probes: 1})
	if got := b.retryAfter(0); got != 100*time.Millisecond {
		t.Fatalf("closed: %v", got)
	}
	b.record(failed, 0)
	b.confirmed(false, 0)
	if got := b.retryAfter(int64(30 * time.Millisecond)); got != 70*time.Millisecond {
		t.Fatalf("open, 30ms in: %v, want 70ms", got)
	}
}
