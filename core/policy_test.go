package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestInvalidPoliciesAreRejectedWithTheirName(t *testing.T) {
	cases := []struct {
		name   string
		build  func() (Policy, error)
		reason string
	}{
		{"zero limit", func() (Policy, error) { return NewPolicy("zero-limit", TokenBucket, PerSecond(0)) }, "limit must be at least 1"},
		{"negative limit", func() (Policy, error) { return NewPolicy("neg-limit", FixedWindow, PerSecond(-5)) }, "limit must be at least 1"},
		{"zero period", func() (Policy, error) { return NewPolicy("zero-period", GCRA, Rate{Limit: 5}) }, "period must be positive"},
		{"negative period", func() (Policy, error) { return NewPolicy("neg-period", GCRA, Rate{Limit: 5, Period: -time.Second}) }, "period must be positive"},
		{"sub-millisecond period", func() (Policy, error) {
			return NewPolicy("fine", TokenBucket, Rate{Limit: 5, Period: 1500 * time.Microsecond})
		}, "whole number of milliseconds"},
		{"burst below one", func() (Policy, error) { return NewPolicy("burst0", TokenBucket, PerSecond(5), WithBurst(0)) }, "burst must be at least 1"},
		{"burst on a window", func() (Policy, error) { return NewPolicy("fw-burst", FixedWindow, PerSecond(5), WithBurst(9)) }, "burst does not apply"},
		{"cost below one", func() (Policy, error) { return NewPolicy("cost0", SlidingLog, PerSecond(5), WithDefaultCost(0)) }, "cost must be at least 1"},
		{"cost above what can be admitted", func() (Policy, error) {
			return NewPolicy("too-costly", TokenBucket, PerSecond(10), WithBurst(4), WithDefaultCost(5))
		}, "can never be admitted"},
		{"cost above a window's limit", func() (Policy, error) { return NewPolicy("win-costly", FixedWindow, PerSecond(3), WithDefaultCost(4)) }, "can never be admitted"},
		{"unknown algorithm", func() (Policy, error) { return NewPolicy("bogus", Algorithm("bogus"), PerSecond(1)) }, "unknown algorithm"},
		{"concurrency through NewPolicy", func() (Policy, error) { return NewPolicy("cc", Concurrency, PerSecond(1)) }, "NewConcurrencyPolicy"},
		{"empty name", func() (Policy, error) { return NewPolicy("", TokenBucket, PerSecond(1)) }, "name must not be empty"},
		{"name with a quote", func() (Policy, error) { return NewPolicy(`a"b`, TokenBucket, PerSecond(1)) }, "name may hold only"},
		{"period too long", func() (Policy, error) {
			return NewPolicy("forever", FixedWindow, Rate{Limit: 1, Period: 400 * 24 * time.Hour})
		}, "at most"},
		{"too fine to be exact", func() (Policy, error) {
			return NewPolicy("prime", TokenBucket, Rate{Limit: 999_999_937, Period: 24 * time.Hour})
		}, "too fine-grained"},
		{"zero in flight", func() (Policy, error) { return NewConcurrencyPolicy("none", 0, time.Second) }, "limit must be at least 1"},
		{"zero lease timeout", func() (Policy, error) { return NewConcurrencyPolicy("lease", 2, 0) }, "period must be positive"},
	}
	for _, c := range cases {
		p, err := c.build()
		if err == nil {
			t.Errorf("%s: accepted as %v", c.name, p)
			continue
		}
		if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: error %q, want ErrInvalidPolicy mentioning %q", c.name, err, c.reason)
		}
		if p.Valid() {
			t.Errorf("%s: returned a valid policy with the error", c.name)
		}
	}
	// The error names the policy.
	_, err := NewPolicy("login-ip", TokenBucket, PerMinute(0))
	if err == nil || !strings.Contains(err.Error(), `"login-ip"`) {
		t.Errorf("error %v does not name the policy", err)
	}
}

func TestPolicyConstructorsAndAccessors(t *testing.T) {
	cases := []struct {
		p                                  Policy
		limit, burst, capacity, period, id any
		window                             time.Duration
	}{
		{MustPolicy("api", TokenBucket, PerSecond(10), WithBurst(20)), int64(10), int64(20), int64(20), time.Second, "api#tb.10.1000.20", 2 * time.Second},
		{MustPolicy("login", SlidingLog, PerMinute(5)), int64(5), int64(5), int64(5), time.Minute, "login#log.5.60000.5", time.Minute},
		{MustPolicy("hourly", GCRA, PerHour(100)), int64(100), int64(100), int64(100), time.Hour, "hourly#gcra.100.3600000.100", time.Hour},
		{MustPolicy("tick", LeakyBucket, Every(250*time.Millisecond), WithBurst(3)), int64(1), int64(3), int64(3), 250 * time.Millisecond, "tick#lb.1.250.3", 750 * time.Millisecond},
		{MustConcurrencyPolicy("export", 2, 30*time.Second), int64(2), int64(2), int64(2), 30 * time.Second, "export#cc.2.30000.2", 30 * time.Second},
	}
	for _, c := range cases {
		p := c.p
		if p.Limit() != c.limit || p.Burst() != c.burst || p.Capacity() != c.capacity || p.Period() != c.period || p.ID() != c.id || p.Window() != c.window {
			t.Errorf("%v: limit %d burst %d capacity %d period %v id %s window %v", p, p.Limit(), p.Burst(), p.Capacity(), p.Period(), p.ID(), p.Window())
		}
	}
	// 1e9 per day, 1 per millisecond and 1e9 per millisecond are all exact.
	for _, r := range []Rate{{Limit: 1_000_000_000, Period: 24 * time.Hour}, {Limit: 1, Period: time.Millisecond}, {Limit: 1_000_000_000, Period: time.Millisecond}} {
		for _, alg := range []Algorithm{TokenBucket, GCRA, FixedWindow, SlidingLog, SlidingWindow, LeakyBucket} {
			if _, err := NewPolicy("range", alg, r); err != nil {
				t.Errorf("%s %v: %v", alg, r, err)
			}
		}
	}
}

func TestMustPolicyPanicsOnInvalid(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustPolicy accepted a zero limit")
		}
	}()
	MustPolicy("bad", TokenBucket, PerSecond(0))
}

func TestParseAlgorithm(t *testing.T) {
	for _, a := range Algorithms() {
		if got, err := ParseAlgorithm(string(a)); err != nil || got != a {
			t.Errorf("ParseAlgorithm(%q) = %q, %v", a, got, err)
		}
	}
	if _, err := ParseAlgorithm("token-bucket"); err == nil {
		t.Error("ParseAlgorithm accepted an unknown name")
	}
}

// The zero Policy is invalid, and everything that can be asked of it answers with
// zero values or an error rather than a panic: it may reach a store from a
// configuration that was never built.
func TestZeroPolicyAnswersWithoutPanicking(t *testing.T) {
	var p Policy
	if p.Valid() || p.Name() != "" || p.ID() != "" || p.Algorithm() != "" || p.Limit() != 0 ||
		p.Period() != 0 || p.Rate() != (Rate{}) || p.Burst() != 0 || p.DefaultCost() != 0 ||
		p.Capacity() != 0 || p.Window() != 0 || p.PeriodMillis() != 0 || p.TokenUnit() != 0 ||
		p.RefillPerMilli() != 0 || p.String() != "invalid policy" {
		t.Fatalf("the zero policy answered with something other than zero values: %v", p)
	}
	if err := p.CheckCost(1); !errors.Is(err, ErrInvalidPolicy) {
		t.Fatalf("CheckCost: %v, want ErrInvalidPolicy", err)
	}
	req := Request{Policy: p, Key: "k"}
	if err := req.Check(); !errors.Is(err, ErrInvalidPolicy) {
		t.Fatalf("Check: %v, want ErrInvalidPolicy", err)
	}
}
