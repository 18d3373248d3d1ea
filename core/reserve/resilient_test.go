package reserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestUnderResilient: a Store wrapped in core/resilient, over the embedded Redis,
// leases as it does alone, and closing the outer store returns the lease.
func TestUnderResilient(t *testing.T) {
	p := core.MustPolicy("p", core.SlidingLog, core.PerMinute(100))
	backing, err := embedded.New()
	if err != nil {
		t.Fatal(err)
	}
	leased, err := reserve.New(backing, []reserve.Lease{{Policy: p, Size: 10}})
	if err != nil {
		backing.Close()
		t.Fatal(err)
	}
	store, err := resilient.New(leased, resilient.WithDeadline(10*time.Second)) // no fallback on a slow first call
	if err != nil {
		leased.Close()
		t.Fatal(err)
	}
	for i := range 15 {
		res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
		if err != nil || !res.Allowed {
			t.Fatalf("request %d: %+v %v", i, res, err)
		}
	}
	if st := leased.Stats(); st.Leases != 2 || st.Held != 5 {
		t.Fatalf("stats %+v: want 2 leases, 5 held", st)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if st := leased.Stats(); st.Returned != 5 || st.Held != 0 {
		t.Fatalf("stats after Close %+v: want 5 returned", st)
	}
}
