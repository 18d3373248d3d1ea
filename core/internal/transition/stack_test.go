package transition

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

func TestStepStackIsAllOrNothing(t *testing.T) {
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	ip := core.MustPolicy("ip", core.TokenBucket, core.PerMinute(2))
	reqs := []core.Request{{Policy: account, Key: "alice"}, {Policy: ip, Key: "203.0.113.9"}}
	states := make([]State, 2)
	results := make([]core.Result, 2)
	for i := 0; i < 2; i++ {
		next, ok := StepStack(states, reqs, t0, results)
		if !ok {
			t.Fatalf("attempt %d refused: %+v", i, results)
		}
		states = next
	}
	next, ok := StepStack(states, reqs, t0, results)
	if ok {
		t.Fatal("third attempt admitted although the IP policy allows 2")
	}
	// Refused as a whole: the account policy reports its quota unspent (3 left after 2).
	if results[0].Allowed || results[0].Remaining != 3 || results[0].RetryAfter != 0 {
		t.Errorf("account result in a refused stack: %+v, want not allowed, 3 remaining, no retry", results[0])
	}
	if results[1].Allowed || results[1].RetryAfter != 30*time.Second {
		t.Errorf("ip result: %+v, want refused with retry 30s", results[1])
	}
	if len(next[0].Log) != 2 || next[0].Count != 2 {
		t.Errorf("the refused stack charged the account policy: %+v", next[0])
	}
	if i := core.MostRestrictive(results); i != 1 {
		t.Errorf("most restrictive is %d, want the refusing ip policy", i)
	}
}

func TestMostRestrictive(t *testing.T) {
	cases := []struct {
		results []core.Result
		want    int
	}{
		{nil, 0},
		{[]core.Result{{Allowed: true, Remaining: 5}, {Allowed: true, Remaining: 2}}, 1},
		{[]core.Result{{Allowed: true, Remaining: 2}, {Allowed: true, Remaining: 2}}, 0},
		{[]core.Result{{Allowed: true}, {Allowed: false, RetryAfter: time.Second}}, 1},
		{[]core.Result{{Allowed: false, RetryAfter: 3 * time.Second}, {Allowed: false, RetryAfter: time.Second}, {Allowed: true}}, 0},
		{[]core.Result{{Allowed: false, RetryAfter: time.Second}, {Allowed: false, RetryAfter: 3 * time.Second}}, 1},
	}
	for i, c := range cases {
		if got := core.MostRestrictive(c.results); got != c.want {
			t.Errorf("case %d: %d, want %d", i, got, c.want)
		}
	}
}

func TestRefundGivesBackWhatWasSpent(t *testing.T) {
	for _, p := range []core.Policy{
		core.MustPolicy("tb", core.TokenBucket, core.PerSecond(10), core.WithBurst(5)),
		core.MustPolicy("gcra", core.GCRA, core.PerSecond(10), core.WithBurst(5)),
		core.MustPolicy("lb", core.LeakyBucket, core.PerSecond(10), core.WithBurst(5)),
		core.MustPolicy("fw", core.FixedWindow, core.PerSecond(5)),
		core.MustPolicy("sw", core.SlidingWindow, core.PerSecond(5)),
		core.MustPolicy("log", core.SlidingLog, core.PerSecond(5)),
	} {
		var s State
		s, _ = Step(s, &p, t0, 2, 0)
		_, want := Peek(s, &p, t0+10, 1)
		s, _ = Step(s, &p, t0+10, 3, 0)
		s = Refund(s, &p, t0+10, t0+10, 3)
		if _, got := Peek(s, &p, t0+10, 1); got != want {
			t.Errorf("%s: after a refund %+v, before the charge %+v", p.Name(), got, want)
		}
		// Refunds never raise a policy above its capacity.
		s = Refund(s, &p, t0+10, t0, 5)
		if _, got := Peek(s, &p, t0+10, 1); got.Remaining > p.Capacity()+1 {
			t.Errorf("%s: refund overfilled: %+v", p.Name(), got)
		}
	}
}
