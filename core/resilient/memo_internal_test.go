package resilient

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Two first decisions of a key in Local mode, the second before the first has
// reported its result, share one local allowance: the second must not seed another,
// full one.
func TestRacingFirstDecisionsShareOneAllowance(t *testing.T) {
	m := newMemo(1000)
	p := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	req := core.Request{Policy: p, Key: "k"}
	noSpend := func(string, int64) error { return nil }
	now := int64(time.Hour)
	first, err := m.localKey(&req, &p, now, noSpend)
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.localKey(&req, &p, now+int64(time.Millisecond), noSpend)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatalf("the second decision seeded another allowance: %q, then %q", first, second)
	}
}
