package reserve_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestOneLeaseForConcurrentRequesters: requesters that find an empty balance at
// once wait for one lease instead of each taking their own.
func TestOneLeaseForConcurrentRequesters(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(100))
	backing := newMemoryBacking(t, clock)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 40})
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if res := decide(t, s, p, "hot", 1); !res.Allowed {
				t.Errorf("refused: %+v", res)
			}
		}()
	}
	close(start)
	wg.Wait()
	if st := s.Stats(); st.Leases != 1 || st.Held != 40-32 {
		t.Fatalf("stats %+v: want 1 lease, 8 held", st)
	}
	if got := backing.decisions.Load(); got != 1 {
		t.Fatalf("%d backing decisions, want 1", got)
	}
}

// TestSweeperReturnsExpiredLeases: the background sweeper returns a lease whose
// lifetime has ended without any request for its key, and Close stops it.
func TestSweeperReturnsExpiredLeases(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.SlidingLog, core.PerMinute(100))
	backing := newMemoryBacking(t, clock)
	s, err := reserve.New(backing, []reserve.Lease{{Policy: p, Size: 10, Lifetime: time.Second}},
		reserve.WithClock(clock.Now), reserve.WithSweepInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	decide(t, s, p, "k", 1)
	clock.Advance(time.Second) // the lease ends; the clock stays here
	deadline := time.After(5 * time.Second)
	for s.Stats().Returned != 9 {
		select {
		case <-deadline:
			t.Fatalf("stats %+v: the sweeper returned nothing in 5s", s.Stats())
		case <-time.After(time.Millisecond): // waiting for the goroutine, not for a rate
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := available(t, backing, p, "k"); got != 99 {
		t.Fatalf("backing has %d, want 99", got)
	}
	if _, err := s.Decide(context.Background(), core.Request{Policy: p, Key: "k"}); err == nil {
		t.Fatal("Decide after Close succeeded")
	}
}

// TestCloseDuringDecisions: Close racing with requests loses nothing and lets
// nothing through after it: what the backing store still misses afterwards is
// exactly what was admitted.
func TestCloseDuringDecisions(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.SlidingLog, core.PerMinute(5000))
	backing := newMemoryBacking(t, clock)
	s, err := reserve.New(backing, []reserve.Lease{{Policy: p, Size: 16}}, reserve.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	var admitted sync.WaitGroup
	counts := make([]int64, 8)
	started := make(chan struct{}, len(counts))
	for g := range counts {
		admitted.Add(1)
		go func() {
			defer admitted.Done()
			for i := 0; ; i++ {
				if i == 10 {
					started <- struct{}{}
				}
				res, err := s.Decide(context.Background(), core.Request{Policy: p, Key: []string{"a", "b"}[i%2]})
				if errors.Is(err, reserve.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					counts[g]++
				}
			}
		}()
	}
	for range counts {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	admitted.Wait()
	var total int64
	for _, n := range counts {
		total += n
	}
	st := s.Stats()
	if st.Leased-st.Returned != total || st.ReturnFailures != 0 || st.Held != 0 {
		t.Fatalf("stats %+v: leased − returned = %d, admitted %d", st, st.Leased-st.Returned, total)
	}
	if missing := 2*p.Capacity() - available(t, backing, p, "a") - available(t, backing, p, "b"); missing != total {
		t.Fatalf("the backing store misses %d, admitted %d", missing, total)
	}
}
