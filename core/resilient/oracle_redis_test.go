package resilient_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// redisOracleSeeds is how many schedules per algorithm and deployment
// TestRedisOutagesNeverAdmitMoreThanThePolicy runs: fewer than on the fake, because
// each costs round trips; -oracle-seeds raises both.
const redisOracleSeeds = 4

// The oracles of TestOutagesNeverAdmitMoreThanThePolicy and
// TestOutagesNeverHoldMoreLeasesThanThePolicy on real servers: the scripts decide,
// settle the return's charges, give refunds back, take the leases Local mode
// granted and their releases, and, on a Cluster, where
// "k" and "ip" live in other slots, split each stack by slot and undo a slot's charge
// when a later slot refuses. The outage is a partition: while it lasts no call
// reaches the server, so nothing lands late.
func TestRedisOutagesNeverAdmitMoreThanThePolicy(t *testing.T) {
	seeds := max(redisOracleSeeds, *oracleSeeds/3)
	deployments := []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) redis.UniversalClient { return redistest.StartServer(t).NewClient() }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t, 3).NewClient() }},
	}
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			client := d.client(t)
			t.Cleanup(func() { client.Close() })
			for _, alg := range append(oracleAlgorithms, core.Concurrency) {
				for seed := uint64(1); seed <= uint64(seeds); seed++ {
					t.Run(fmt.Sprintf("%s/seed%d", alg, seed), func(t *testing.T) {
						clock := storetest.NewClock()
						store, err := redisstore.New(client, redisstore.WithClock(clock.Now),
							redisstore.WithPrefix(fmt.Sprintf("oracle-%s-%d:", alg, seed)))
						if err != nil {
							t.Fatal(err)
						}
						shared := &partition{Store: store}
						r := newRigOver(t, clock, shared)
						if alg == core.Concurrency {
							runLeaseOracle(t, r, seed, shared.down.Store)
							return
						}
						runOracle(t, r, alg, seed, shared.down.Store)
					})
				}
			}
		})
	}
}

// partition is a Redis store that no call reaches while down is set: each fails at
// once as unavailable, as when the network between the service and Redis is cut.
// Key, Node and the rest are the store's own.
type partition struct {
	*redisstore.Store
	down atomic.Bool
}

func (p *partition) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if p.down.Load() {
		return core.Result{}, errDown
	}
	return p.Store.Decide(ctx, req)
}

func (p *partition) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if p.down.Load() {
		return false, errDown
	}
	return p.Store.DecideStack(ctx, reqs, results)
}

func (p *partition) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	if p.down.Load() {
		return errDown
	}
	return p.Store.Refund(ctx, req, chargedAt)
}

func (p *partition) Release(ctx context.Context, req core.Request, lease uint64) error {
	if p.down.Load() {
		return errDown
	}
	return p.Store.Release(ctx, req, lease)
}
