package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestCheckEvictionNamesTheServersThatLoseState: 20 locked login accounts (5 an hour,
// all spent) on a real redis-server, then a flood of 25,000 invented accounts. Where
// the server's maxmemory-policy evicts, the flood deletes locked state and those
// accounts start again with their whole limit; under noeviction (or with no
// maxmemory) they all stay locked, and the flood's own admissions fail as core.ErrStoreUnavailable
// (OOM) once memory is full. CheckEviction reports exactly the servers of the first
// kind, naming the server and its policy.
func TestCheckEvictionNamesTheServersThatLoseState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		evicts bool
	}{
		{"allkeys-lru", []string{"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"}, true},
		{"volatile-ttl", []string{"--maxmemory", "2mb", "--maxmemory-policy", "volatile-ttl"}, true},
		{"noeviction", []string{"--maxmemory", "2mb", "--maxmemory-policy", "noeviction"}, false},
		{"no maxmemory", []string{"--maxmemory-policy", "allkeys-lru"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.StartServer(t, tc.args...)
			s := storeOnServer(t, srv)
			ctx := context.Background()

			err := s.CheckEviction(ctx)
			switch {
			case tc.evicts && err == nil:
				t.Errorf("CheckEviction: nil for a server with %v", tc.args)
			case tc.evicts && (!errors.Is(err, redisstore.ErrEvicts) || !strings.Contains(err.Error(), srv.Addr) || !strings.Contains(err.Error(), tc.name)):
				t.Errorf("CheckEviction: %q, want ErrEvicts with the server %s and its policy %s named", err, srv.Addr, tc.name)
			case !tc.evicts && err != nil:
				t.Errorf("CheckEviction: %v for a server with %v, want nil", err, tc.args)
			}

			login := core.MustPolicy("login", core.FixedWindow, core.PerHour(5))
			const victims = 20
			for v := range victims {
				for range 6 {
					if _, err := s.Decide(ctx, core.Request{Policy: login, Key: fmt.Sprintf("victim-%d", v)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			unavailable, other := flood(ctx, s, login, 25000)
			unlocked := 0
			for v := range victims {
				res, err := s.Decide(ctx, core.Request{Policy: login, Key: fmt.Sprintf("victim-%d", v)})
				if err != nil {
					t.Fatalf("locked account %d after the flood: %v", v, err)
				}
				if res.Allowed {
					unlocked++
				}
			}
			t.Logf("%s: the flood's decisions failed as unavailable %d times; %d of %d locked accounts were admitted after it",
				tc.name, unavailable, unlocked, victims)
			if other != nil {
				t.Errorf("a flood decision failed with %v, want only core.ErrStoreUnavailable", other)
			}
			// Redis picks what it evicts by sampling, and its LRU clock counts whole
			// seconds, so which keys go is partly chance: 19 or 20 of the 20 accounts
			// lost their state in every run, and one is enough to fail the promise.
			if tc.evicts && unlocked == 0 {
				t.Errorf("no locked account was admitted after the flood on an evicting server")
			}
			if !tc.evicts && unlocked != 0 {
				t.Errorf("%d locked accounts were admitted after the flood on a server that does not evict", unlocked)
			}
			if tc.name == "noeviction" && unavailable == 0 {
				t.Errorf("no flood decision failed: the flood did not fill the 2 MB server")
			}
		})
	}
}

// flood decides n invented keys of policy on 8 goroutines, and counts the decisions
// that failed as core.ErrStoreUnavailable; other is any other error.
func flood(ctx context.Context, s *redisstore.Store, policy core.Policy, n int) (unavailable int64, other error) {
	var (
		next, failed atomic.Int64
		mu           sync.Mutex
		wg           sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				_, err := s.Decide(ctx, core.Request{Policy: policy, Key: fmt.Sprintf("invented-%d", i)})
				switch {
				case errors.Is(err, core.ErrStoreUnavailable):
					failed.Add(1)
				case err != nil:
					mu.Lock()
					other = err
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return failed.Load(), other
}

// On a Cluster, CheckEviction reads every master and names the one that evicts.
func TestCheckEvictionOnACluster(t *testing.T) {
	c := servers.Cluster(t)
	client := c.NewClient()
	defer client.Close()
	s, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.CheckEviction(ctx); err != nil {
		t.Fatalf("CheckEviction on a Cluster with no maxmemory: %v", err)
	}
	evicting := c.Servers[1].NewClient()
	defer evicting.Close()
	// 1 GB: far more than the tests that share this Cluster use, so nothing is evicted.
	if err := evicting.ConfigSet(ctx, "maxmemory", "1gb").Err(); err != nil {
		t.Fatal(err)
	}
	if err := evicting.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		evicting.ConfigSet(ctx, "maxmemory-policy", "noeviction")
		evicting.ConfigSet(ctx, "maxmemory", "0")
	})
	err = s.CheckEviction(ctx)
	if !errors.Is(err, redisstore.ErrEvicts) || !strings.Contains(err.Error(), c.Servers[1].Addr) || !strings.Contains(err.Error(), "volatile-lru") {
		t.Fatalf("CheckEviction: %v, want master %s and volatile-lru named", err, c.Servers[1].Addr)
	}
	for _, other := range []int{0, 2} {
		if strings.Contains(err.Error(), c.Servers[other].Addr) {
			t.Errorf("CheckEviction: %v names master %s, which does not evict", err, c.Servers[other].Addr)
		}
	}
}

// storeOnServer is a store with the default options on its own client of srv; both
// are closed when t ends.
func storeOnServer(t *testing.T, srv *redistest.Server) *redisstore.Store {
	t.Helper()
	client := srv.NewClient()
	t.Cleanup(func() { client.Close() })
	s, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Through Sentinel, CheckEviction asks the master the Sentinels name, and says so.
func TestCheckEvictionThroughSentinel(t *testing.T) {
	master := redistest.StartServer(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	sentinel := redistest.StartSentinel(t, master, "limiter", 5*time.Second)
	s, err := redisstore.DialUniversal(&redis.UniversalOptions{MasterName: "limiter", Addrs: []string{sentinel.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.CheckEviction(context.Background())
	if !errors.Is(err, redisstore.ErrEvicts) || !strings.Contains(err.Error(), "the master the Sentinels name") || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Fatalf("CheckEviction through Sentinel: %v, want ErrEvicts naming the Sentinels' master and allkeys-lru", err)
	}
}
