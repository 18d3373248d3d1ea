package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// batchClients are the servers the batch tests run on: testClients(true) and a
// Ring of two servers.
var batchClients = func() map[string]func(testing.TB) redis.UniversalClient {
	clients := testClients(true)
	clients["Ring"] = func(t testing.TB) redis.UniversalClient {
		a, b := redistest.StartServer(t), redistest.StartServer(t)
		ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}, ContextTimeoutEnabled: true})
		t.Cleanup(func() { ring.Close() })
		return ring
	}
	return clients
}()

// batchedAndAlone are two stores on client at one injected clock: one with batching,
// one without, under prefixes of their own.
func batchedAndAlone(t *testing.T, client redis.UniversalClient) (clock *storetest.Clock, batched, alone *redisstore.Store) {
	clock = storetest.NewClock()
	batched = newStoreOn(client, batching)(t, clock).(*redisstore.Store)
	alone = newStoreOn(client)(t, clock).(*redisstore.Store)
	return clock, batched, alone
}

// TestBatchesDecideAsAlone sends batches of every algorithm, with keys repeated within
// a batch and pairs of decisions that share their arguments, and decides the same requests one at a time, in the same order and at the
// same instants, through an unbatched store on the same server: every result must be
// identical, field for field.
func TestBatchesDecideAsAlone(t *testing.T) {
	for name, newClient := range batchClients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			clock, batched, alone := batchedAndAlone(t, client)
			policies := storetest.Policies()
			ctx := context.Background()
			at := storetest.Start
			for step := 0; step < 40; step++ {
				at += int64(step*7919) % 450
				clock.Set(at)
				reqs := make([]core.Request, 2+step%23)
				for i := range reqs {
					// Pairs share a policy: a run of equal arguments, with the second's
					// reply often repeating the first's integers.
					reqs[i] = core.Request{Policy: policies[(step*5+i/2*3)%len(policies)], Key: fmt.Sprint("k", (step+i)%4), Lease: uint64(step*100 + i + 1)}
				}
				// The first (policy, key) again: one slot, so one batch script call even on a Cluster.
				reqs[len(reqs)-1] = reqs[0]
				reqs[len(reqs)-1].Lease++
				got, errs := redisstore.FlushBatch(batched, ctx, reqs)
				for i, req := range reqs {
					want, err := alone.Decide(ctx, req)
					if err != nil || errs[i] != nil {
						t.Fatalf("step %d decision %d (%s): batched error %v, alone error %v", step, i, req.Policy.Name(), errs[i], err)
					}
					if got[i] != want {
						t.Fatalf("step %d decision %d (%s, key %s):\nbatched %+v\n  alone %+v", step, i, req.Policy.Name(), req.Key, got[i], want)
					}
				}
			}
		})
	}
}

// TestBatchDecidesAtOneServerInstant: with Redis TIME, a batch reads the time once, so
// twelve charges on one fresh key of a limit of five decide as core does for twelve
// requests at one instant: the first admitted, remaining counting down, then refusals.
func TestBatchDecidesAtOneServerInstant(t *testing.T) {
	for name, newClient := range batchClients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			store := newBatchingStore(t, client)
			for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket, core.FixedWindow} {
				p := core.MustPolicy("instant-"+string(alg), alg, core.PerMinute(5))
				reqs := make([]core.Request, 12)
				for i := range reqs {
					reqs[i] = core.Request{Policy: p, Key: "fresh"}
				}
				before := serverMillis(t, client, store.Key(p, "fresh"))
				got, errs := redisstore.FlushBatch(store, context.Background(), reqs)
				after := serverMillis(t, client, store.Key(p, "fresh"))
				if at := got[0].DecidedAt.UnixMilli(); errs[0] == nil && (at < before || at > after) {
					t.Fatalf("the batch decided at %d ms, outside the server's %d..%d", at, before, after)
				}
				var state transition.State
				admitted, refused := 0, 0
				for i := range reqs {
					if errs[i] != nil {
						t.Fatalf("%s decision %d: %v", alg, i, errs[i])
					}
					var want core.Result
					state, want = transition.Step(state, &p, storetest.Start, 1, 0)
					if got[i].DecidedAt != got[0].DecidedAt {
						t.Fatalf("%s decision %d decided at %v, decision 0 at %v", alg, i, got[i].DecidedAt, got[0].DecidedAt)
					}
					want.DecidedAt = got[i].DecidedAt // the server's instant, checked above
					if alg == core.FixedWindow {      // its reset depends on where in the window now lies
						want.ResetAfter, got[i].ResetAfter = 0, 0
						want.RetryAfter, got[i].RetryAfter = 0, 0
					}
					if got[i] != want {
						t.Fatalf("%s decision %d:\n got %+v\nwant %+v", alg, i, got[i], want)
					}
					if got[i].Allowed {
						admitted++
					} else {
						refused++
					}
				}
				if admitted < 5 || refused == 0 {
					t.Fatalf("%s admitted %d and refused %d of 12", alg, admitted, refused)
				}
			}
		})
	}
}

// TestBatchErrorsStayPerDecision: a key of another type in the middle of a batch fails
// that decision alone, with WRONGTYPE; the others are decided.
func TestBatchErrorsStayPerDecision(t *testing.T) {
	for name, newClient := range batchClients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			store := newBatchingStore(t, client)
			ctx := context.Background()
			for _, alg := range []core.Algorithm{core.GCRA, core.SlidingWindow} {
				p := core.MustPolicy("errors-"+string(alg), alg, core.PerMinute(5))
				if err := client.LPush(ctx, store.Key(p, "list"), "x").Err(); err != nil {
					t.Fatal(err)
				}
				reqs := []core.Request{{Policy: p, Key: "a"}, {Policy: p, Key: "list"}, {Policy: p, Key: "a"}}
				got, errs := redisstore.FlushBatch(store, ctx, reqs)
				if errs[0] != nil || errs[2] != nil || !got[0].Allowed || !got[2].Allowed || got[2].Remaining != 3 {
					t.Fatalf("%s: the decisions around the bad key: %+v %v, %+v %v", alg, got[0], errs[0], got[2], errs[2])
				}
				if !errors.Is(errs[1], redisstore.ErrUnexpectedReply) || !strings.Contains(errs[1].Error(), "WRONGTYPE") ||
					!strings.Contains(errs[1].Error(), p.Name()) {
					t.Fatalf("%s: the bad key: %v, want ErrUnexpectedReply with WRONGTYPE naming the policy", alg, errs[1])
				}
				if typ, err := client.Type(ctx, store.Key(p, "list")).Result(); err != nil || typ != "list" {
					t.Fatalf("%s: the bad key is now a %q (%v): a failed decision must not write", alg, typ, err)
				}
			}
		})
	}
}

// serverMillis reads TIME, in milliseconds, from the server that holds key.
func serverMillis(t *testing.T, client redis.UniversalClient, key string) int64 {
	t.Helper()
	ctx := context.Background()
	var cmd *redis.TimeCmd
	if c, ok := client.(*redis.ClusterClient); ok {
		node, err := c.MasterForKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		cmd = node.Time(ctx)
	} else {
		cmd = client.Time(ctx)
	}
	now, err := cmd.Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// TestBatchRunOnOneKeyLeavesWhatAloneLeaves: a batch of decisions on one key, whose
// charges the batch script keeps in memory and writes once, leaves the key with the
// value and TTL that the same decisions one at a time leave, for every algorithm: runs
// that end admitted, end refused after admissions, and change cost midway.
func TestBatchRunOnOneKeyLeavesWhatAloneLeaves(t *testing.T) {
	for name, newClient := range batchClients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			clock, batched, alone := batchedAndAlone(t, client)
			for i, p := range storetest.Policies() {
				for _, costs := range [][]int64{{1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 2, 2, 1, 1}} {
					clock.Set(storetest.Start + int64(i)*1000)
					key := fmt.Sprintf("run-%d-%d", i, len(costs))
					reqs := make([]core.Request, len(costs))
					for j, cost := range costs {
						reqs[j] = core.Request{Policy: p, Key: key, Cost: min(cost, p.Capacity()), Lease: uint64(j + 1)}
					}
					start := time.Now()
					decideBatchedAndAlone(t, batched, alone, reqs, fmt.Sprint("costs ", costs))
					sameKeys(t, client, batched, alone, reqs[:1], start)
				}
			}
		})
	}
}

// TestBatchRunOverKeysLeavesWhatAloneLeaves: a run of decisions with one policy over
// keys whose states differ (each key charged a different number of times before)
// leaves every key with the value and TTL that the same decisions one at a time
// leave, for every algorithm. A batch shares work between the decisions of a run (the
// text of a write, for GCRA and the leaky bucket); no key may get another's state.
func TestBatchRunOverKeysLeavesWhatAloneLeaves(t *testing.T) {
	for name, newClient := range batchClients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			clock, batched, alone := batchedAndAlone(t, client)
			ctx := context.Background()
			for i, p := range storetest.Policies() {
				at := storetest.Start + int64(i)*1000
				clock.Set(at)
				start := time.Now() // refused decisions write nothing: a key's last write may be a prior charge
				reqs := make([]core.Request, 6)
				for j := range reqs {
					reqs[j] = core.Request{Policy: p, Key: fmt.Sprintf("keys-%d-%d", i, j), Lease: uint64(j + 1)}
					for charge := range j { // the same charges on both stores
						prior := reqs[j]
						prior.Lease = uint64(100 + 10*j + charge)
						for _, s := range []*redisstore.Store{batched, alone} {
							if _, err := s.Decide(ctx, prior); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				clock.Set(at + 1)
				decideBatchedAndAlone(t, batched, alone, reqs, "keys of different states")
				sameKeys(t, client, batched, alone, reqs, start)
			}
		})
	}
}

// decideBatchedAndAlone decides reqs as one batch on batched and one at a time on
// alone, and fails t unless every result is identical; what names the case.
func decideBatchedAndAlone(t *testing.T, batched, alone *redisstore.Store, reqs []core.Request, what string) {
	t.Helper()
	ctx := context.Background()
	got, errs := redisstore.FlushBatch(batched, ctx, reqs)
	for j, req := range reqs {
		want, err := alone.Decide(ctx, req)
		if err != nil || errs[j] != nil || got[j] != want {
			t.Fatalf("%s, %s, decision %d: batched %+v %v, alone %+v %v", req.Policy.Name(), what, j, got[j], errs[j], want, err)
		}
	}
}

// sameKeys fails t unless the state of each request's (policy, key) holds the same
// value on batched as on alone, with the same TTL. The TTLs count down on the
// server's clock from each write and are read one after the other: they may differ
// by the time since start, before the first write compared.
func sameKeys(t *testing.T, client redis.UniversalClient, batched, alone *redisstore.Store, reqs []core.Request, start time.Time) {
	t.Helper()
	for _, req := range reqs {
		b, a := keyDump(t, client, batched.Key(req.Policy, req.Key)), keyDump(t, client, alone.Key(req.Policy, req.Key))
		// Both keys were written and read between start and now, each written before
		// it was read: their TTLs differ by at most that time, plus a ms of rounding.
		apart := time.Since(start) + time.Millisecond
		if b.value != a.value || b.ttl-a.ttl > apart || a.ttl-b.ttl > apart {
			t.Fatalf("%s, %s: the batched key holds %q with TTL %v, alone %q with TTL %v (written %v apart at most)",
				req.Policy.Name(), req.Key, b.value, b.ttl, a.value, a.ttl, apart)
		}
	}
}

// keyDump is a key's value (its string, or its list's items) and TTL.
func keyDump(t *testing.T, client redis.UniversalClient, key string) (dump struct {
	value string
	ttl   time.Duration
}) {
	t.Helper()
	ctx := context.Background()
	var err error
	if dump.ttl, err = client.PTTL(ctx, key).Result(); err != nil {
		t.Fatal(err)
	}
	if dump.value, err = client.Get(ctx, key).Result(); err != nil {
		t.Fatal(err)
	}
	return dump
}
