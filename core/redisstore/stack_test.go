package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestLoginStackAllOrNothingConcurrently sends login stacks (account, IP, subnet) from
// 64 goroutines at one instant and then reads the state in Redis: every policy must have
// been charged exactly by the stacks that were admitted, none by refused ones. On a
// Cluster the three keys lie in different slots, so this exercises charge-and-refund
// under contention.
func TestLoginStackAllOrNothingConcurrently(t *testing.T) {
	for name, client := range testClients(true) {
		t.Run(name, func(t *testing.T) {
			client := client(t)
			clock := storetest.NewClock()
			store, err := redisstore.New(client, redisstore.WithClock(clock.Now), redisstore.WithPrefix(uniquePrefix()))
			if err != nil {
				t.Fatal(err)
			}
			account := core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5))
			ip := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
			subnet := core.MustPolicy("login-subnet", core.FixedWindow, core.PerMinute(100))
			accounts := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace"}
			ips := []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"}

			var mu sync.Mutex
			byAccount, byIP := map[string]int64{}, map[string]int64{}
			total := int64(0)
			var wg sync.WaitGroup
			for g := 0; g < 64; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 4; i++ {
						a, addr := accounts[(g+i)%len(accounts)], ips[(g*7+i)%len(ips)]
						reqs := []core.Request{{Policy: account, Key: a}, {Policy: ip, Key: addr}, {Policy: subnet, Key: "203.0.113"}}
						results := make([]core.Result, len(reqs))
						allowed, err := store.DecideStack(context.Background(), reqs, results)
						if err != nil {
							t.Error(err)
							return
						}
						if allowed {
							mu.Lock()
							byAccount[a]++
							byIP[addr]++
							total++
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			ctx := context.Background()
			for _, a := range accounts {
				if got := logSum(t, client.Get(ctx, store.Key(account, a)).Val()); got != byAccount[a] || got > 5 {
					t.Errorf("account %s: log holds cost %d, admitted stacks %d (limit 5)", a, got, byAccount[a])
				}
			}
			for _, addr := range ips {
				spent := int64(0)
				if v, err := client.Get(ctx, store.Key(ip, addr)).Result(); err == nil {
					tokens, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
					spent = 20 - tokens/ip.TokenUnit()
				}
				if spent != byIP[addr] {
					t.Errorf("ip %s: bucket spent %d, admitted stacks %d", addr, spent, byIP[addr])
				}
			}
			count := int64(0)
			if v, err := client.Get(ctx, store.Key(subnet, "203.0.113")).Result(); err == nil {
				if _, count, err = redisstore.FixedWindowState(subnet, v); err != nil {
					t.Fatalf("subnet window state %q: %v", v, err)
				}
			}
			if count != total {
				t.Errorf("subnet window counts %d, admitted stacks %d", count, total)
			}
			if total != 35 { // 7 accounts × 5, within 3 IPs × 20 and the subnet's 100
				t.Errorf("admitted %d stacks, want 35", total)
			}
		})
	}
}

// logSum adds up the costs of a sliding log's "at cost,at cost" entries ("" when the
// key is missing).
func logSum(t *testing.T, log string) int64 {
	t.Helper()
	sum := int64(0)
	for entry := range strings.SplitSeq(log, ",") {
		if entry == "" {
			continue
		}
		fields := strings.Fields(entry)
		cost, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if len(fields) != 2 || err != nil {
			t.Fatalf("log entry %q: %v", entry, err)
		}
		sum += cost
	}
	return sum
}

// TestStackOneCallPerSlotGroup checks which stacks are one script call: on a Cluster,
// a stack tagged into one slot is one EVALSHA; an untagged one is one per key.
func TestStackOneCallPerSlotGroup(t *testing.T) {
	client := clusterClient(t)
	counter := &commandCounter{}
	client.AddHook(counter)
	policies := []core.Policy{
		core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5)),
		core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20)),
		core.MustPolicy("login-subnet", core.FixedWindow, core.PerMinute(100)),
	}
	for _, c := range []struct {
		name  string
		opts  []redisstore.Option
		calls int64
	}{
		{"Untagged", nil, 3},
		{"Tagged", []redisstore.Option{redisstore.WithHashTag(redisstore.TagPolicies("login", "login-account", "login-ip", "login-subnet"))}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, err := redisstore.New(client, append(c.opts, redisstore.WithPrefix(uniquePrefix()))...)
			if err != nil {
				t.Fatal(err)
			}
			// The first round loads the script on the nodes (EVALSHA, NOSCRIPT, EVAL);
			// the second is counted.
			for round := 0; round < 2; round++ {
				for i := 0; i < 10; i++ {
					reqs := []core.Request{
						{Policy: policies[0], Key: fmt.Sprintf("user%d", i)},
						{Policy: policies[1], Key: "203.0.113.9"},
						{Policy: policies[2], Key: "203.0.113"},
					}
					counter.reset()
					if _, err := store.DecideStack(context.Background(), reqs, make([]core.Result, 3)); err != nil {
						t.Fatal(err)
					}
					if got := counter.scripts(); round == 1 && got != c.calls {
						t.Fatalf("stack %d: %d script calls, want %d", i, got, c.calls)
					}
				}
			}
		})
	}
}
