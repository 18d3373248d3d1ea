package transition_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/reference"
)

// The worked example: a token bucket of rate 10/s and capacity 50, fed 60 requests
// per second. The bucket drains in about one second (it loses 50 tokens a second net
// of refill), then admits about one request in six (10 of 60). Request i arrives at
// i×1000/60 ms exactly; the decisions are checked against exact rational arithmetic.
func TestWorkedExampleTokenBucketAt60PerSecond(t *testing.T) {
	p := core.MustPolicy("worked", core.TokenBucket, core.PerSecond(10), core.WithBurst(50))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	// Arrival times are fractions of a millisecond; the store clock is whole
	// milliseconds, so request i is decided at ⌊i×1000/60⌋ ms.
	const requests = 60 * 10 // ten seconds
	var s transition.State
	ref := reference.New(p)
	admitted := make([]bool, requests)
	for i := int64(0); i < requests; i++ {
		at := t0 + i*1000/60
		var r core.Result
		s, r = transition.Step(s, &p, at, 1, 0)
		want := ref.Decide(at, 1).Allowed
		if r.Allowed != want {
			t.Fatalf("request %d at %dms: allowed=%v, exact arithmetic says %v", i, at-t0, r.Allowed, want)
		}
		admitted[i] = r.Allowed
	}
	// Drain: every request is admitted until the tokens run out. Request i finds
	// 50 + t_i/100 - i tokens, t_i = ⌊i×1000/60⌋ ms; the first i where that is below 1
	// is 59 (50 + 9.83 - 59 = 0.83): the bucket drains at 983 ms, about one second.
	firstRefusal := -1
	for i, ok := range admitted {
		if !ok {
			firstRefusal = i
			break
		}
	}
	drain := new(big.Rat).SetFrac64(int64(firstRefusal)*1000, 60) // ms
	if firstRefusal != 59 {
		t.Fatalf("first refusal at request %d (%s ms), want request 59 (983 ms)", firstRefusal, drain.FloatString(1))
	}
	// After the drain: one in six, i.e. exactly 10 per second, in every later second.
	for second := 2; second < 10; second++ {
		n := 0
		for _, ok := range admitted[second*60 : (second+1)*60] {
			if ok {
				n++
			}
		}
		if n != 10 {
			t.Errorf("second %d admitted %d of 60, want 10 (one in six)", second, n)
		}
	}
	total := 0
	for _, ok := range admitted {
		if ok {
			total++
		}
	}
	// 50 tokens to start plus 10 a second for the ten seconds (the last earned token
	// arrives at 10 000 ms, after the last request at 9 983 ms).
	if total != 50+99 {
		t.Errorf("admitted %d in ten seconds, want 149 (50 + 10/s × 9.98 s, whole tokens)", total)
	}
}
