package redisstore

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEmbeddingOptionsValidated(t *testing.T) {
	for name, c := range map[string]struct {
		option Option
		want   string
	}{
		"StepZero":       {WithExpiryStep(0), "WithExpiryStep"},
		"StepTooLong":    {WithExpiryStep(25 * time.Hour), "WithExpiryStep"},
		"StepFractional": {WithExpiryStep(1500 * time.Microsecond), "WithExpiryStep"},
		"NilCloser":      {WithCloser(nil), "WithCloser"},
	} {
		if _, err := New(nilClient{}, c.option); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %s", name, err, c.want)
		}
	}
}

// An expiry step lengthens every TTL by the step, on top of either default margin
// or a chosen one.
func TestExpiryStepAddsToTheMargin(t *testing.T) {
	for _, c := range []struct {
		options []Option
		want    time.Duration
	}{
		{nil, DefaultServerTimeMargin + time.Second},
		{[]Option{WithClock(time.Now)}, DefaultCallerClockMargin + time.Second},
		{[]Option{WithExpiryMargin(5 * time.Millisecond)}, 5*time.Millisecond + time.Second},
	} {
		s, err := New(nilClient{}, append(c.options, WithExpiryStep(time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		if s.margin != any(c.want.Milliseconds()) {
			t.Errorf("margin %vms, want %v", s.margin, c.want)
		}
	}
}

// Close runs the closers once each, in the order given, and returns the first error;
// a New that fails runs none.
func TestClosersRunOnceInOrder(t *testing.T) {
	var ran []int
	first, second := errors.New("first"), errors.New("second")
	closer := func(i int, err error) Option {
		return WithCloser(func() error { ran = append(ran, i); return err })
	}
	if _, err := New(nilClient{}, closer(0, nil), WithPrefix("{")); err == nil {
		t.Fatal("an invalid option was accepted")
	}
	if len(ran) != 0 {
		t.Fatalf("a failed New ran closers %v", ran)
	}
	s, err := New(nilClient{}, closer(1, nil), closer(2, first), closer(3, second))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, first) {
		t.Errorf("Close: %v, want the first closer's error", err)
	}
	if err := s.Close(); !errors.Is(err, first) {
		t.Errorf("second Close: %v, want the same error", err)
	}
	if len(ran) != 3 || ran[0] != 1 || ran[1] != 2 || ran[2] != 3 {
		t.Errorf("closers ran %v, want [1 2 3] once each", ran)
	}
}
