package reserve_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// notRefunding hides a store's Refund.
type notRefunding struct{ core.Store }

func TestNewRefusesLeasesItCannotHonour(t *testing.T) {
	tb := core.MustPolicy("tb", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	leaky := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(10))
	conc := core.MustConcurrencyPolicy("exports", 2, time.Minute)
	cases := []struct {
		name   string
		leases []reserve.Lease
		want   string
	}{
		{"leaky bucket", []reserve.Lease{{Policy: leaky, Size: 2}}, `"queue": leaky_bucket policies cannot be leased`},
		{"concurrency", []reserve.Lease{{Policy: conc, Size: 1}}, `"exports": concurrency policies cannot be leased`},
		{"size zero", []reserve.Lease{{Policy: tb, Size: 0}}, `"tb": lease size 0 is outside 1..20`},
		{"size above capacity", []reserve.Lease{{Policy: tb, Size: 21}}, `"tb": lease size 21 is outside 1..20`},
		{"lifetime below 1ms", []reserve.Lease{{Policy: tb, Size: 5, Lifetime: time.Microsecond}}, `"tb": lease lifetime 1µs is shorter than 1ms`},
		{"negative lifetime", []reserve.Lease{{Policy: tb, Size: 5, Lifetime: -time.Second}}, `"tb": lease lifetime -1s`},
		{"lifetime that overflows", []reserve.Lease{{Policy: tb, Size: 5, Lifetime: 1<<63 - 1}}, `"tb": lease lifetime 2562047h47m16.854775807s is longer than 24h0m0s`},
		{"leased twice", []reserve.Lease{{Policy: tb, Size: 5}, {Policy: tb, Size: 6}}, `"tb": leased twice`},
		{"zero policy", []reserve.Lease{{Size: 5}}, "zero Policy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := reserve.New(memory.MustNew(), c.leases)
			if err == nil {
				s.Close()
				t.Fatal("New succeeded")
			}
			if !errors.Is(err, core.ErrInvalidPolicy) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q: want ErrInvalidPolicy containing %q", err, c.want)
			}
		})
	}
}

func TestNewNeedsARefundingBackingStore(t *testing.T) {
	if _, err := reserve.New(nil, nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
	m := memory.MustNew()
	defer m.Close()
	_, err := reserve.New(notRefunding{m}, nil)
	if err == nil || !strings.Contains(err.Error(), "not a core.Refunder") {
		t.Fatalf("error %v: want one saying the store cannot refund", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for name, option := range map[string]reserve.Option{
		"nil clock":      reserve.WithClock(nil),
		"negative sweep": reserve.WithSweepInterval(-time.Second),
		"zero timeout":   reserve.WithReturnTimeout(0),
		"zero keys":      reserve.WithMaxKeys(0),
	} {
		if s, err := reserve.New(memory.MustNew(), nil, option); err == nil {
			s.Close()
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestMustNewPanicsOnInvalidConfiguration(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustNew did not panic")
		}
	}()
	reserve.MustNew(memory.MustNew(), []reserve.Lease{{Policy: core.MustPolicy("tb", core.TokenBucket, core.PerSecond(1)), Size: 2}})
}

func TestLeasedNamesOnlyTheLeasedPolicy(t *testing.T) {
	clock := storetest.NewClock()
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	upgraded := core.MustPolicy("api", core.TokenBucket, core.PerSecond(100), core.WithBurst(200))
	s := newReplica(t, newMemoryBacking(t, clock), clock, reserve.Lease{Policy: api, Size: 5})
	if !s.Leased(api) {
		t.Error("api is not leased")
	}
	if s.Leased(upgraded) {
		t.Error("api with other parameters is leased")
	}
}
