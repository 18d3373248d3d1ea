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

// redisOracleSeeds is how many schedules per algorithm and deployment the Redis
// oracles run: fewer than on the fake, because each costs round trips; -oracle-seeds
// raises both.
const redisOracleSeeds = 4

// The oracles of TestOutagesNeverAdmitMoreThanThePolicy and
// TestOutagesNeverHoldMoreLeasesThanThePolicy on real servers: the scripts decide,
// settle the return's charges, give refunds back, take the leases Local mode
// granted and their releases, and, on a Cluster, where
// "k" and "ip" live in other slots, split each stack by slot and undo a slot's charge
// when a later slot refuses. The outage is a partition: while it lasts no call
// reaches the server, so nothing lands late.
func TestRedisOutagesNeverAdmitMoreThanThePolicy(t *testing.T) {
	onRedisDeployments(t, func(t *testing.T, client redis.UniversalClient) {
		for _, alg := range append(oracleAlgorithms, core.Concurrency) {
			for seed := uint64(1); seed <= uint64(max(redisOracleSeeds, *oracleSeeds/3)); seed++ {
				t.Run(fmt.Sprintf("%s/seed%d", alg, seed), func(t *testing.T) {
					clock := storetest.NewClock()
					shared := newPartition(t, client, clock, fmt.Sprintf("oracle-%s-%d:", alg, seed))
					r := newRigOver(t, clock, shared)
					if alg == core.Concurrency {
						runLeaseOracle(t, r, seed, 10*time.Second, shared.down.Store)
						return
					}
					runOracle(t, r, alg, seed, shared.down.Store)
				})
			}
		}
	})
}

// The two-replica oracle (TestTwoReplicasThroughOutagesStayWithinTheirBound) on real
// servers: both replicas' settlements, each charging down to twice what its own
// allowance leaves, go through the scripts, and on a Cluster through each key's slot.
func TestRedisTwoReplicasThroughOutagesStayWithinTheirBound(t *testing.T) {
	onRedisDeployments(t, func(t *testing.T, client redis.UniversalClient) {
		for _, alg := range oracleAlgorithms {
			for seed := uint64(1); seed <= uint64(max(redisOracleSeeds, *oracleSeeds/3)); seed++ {
				t.Run(fmt.Sprintf("%s/seed%d", alg, seed), func(t *testing.T) {
					clock := storetest.NewClock()
					shared := newPartition(t, client, clock, fmt.Sprintf("replicas-%s-%d:", alg, seed))
					runReplicaOracle(t, alg, seed, clock, shared, shared.down.Store)
				})
			}
		}
	})
}

// TestReplicasReturningOneAfterTheOther on real servers: the settlements that pin
// the bound of replicas returning after spending unequally are the scripts' own.
func TestRedisReplicasReturningOneAfterTheOther(t *testing.T) {
	onRedisDeployments(t, func(t *testing.T, client redis.UniversalClient) {
		for _, spent := range replicaSpending {
			t.Run(fmt.Sprintf("A%d,B%d", spent[0], spent[1]), func(t *testing.T) {
				clock := storetest.NewClock()
				shared := newPartition(t, client, clock, fmt.Sprintf("return-%d-%d:", spent[0], spent[1]))
				returnOneAfterTheOther(t, clock, shared, spent, shared.down.Store)
			})
		}
	})
}

// onRedisDeployments runs test on each real deployment the Redis oracles use, a
// standalone redis-server and a 3-master Cluster, each started on free loopback
// ports, with a client of it.
func onRedisDeployments(t *testing.T, test func(t *testing.T, client redis.UniversalClient)) {
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
			test(t, client)
		})
	}
}

// newPartition is a Redis store on client, reading clock, its keys under prefix,
// behind a partition the test can cut.
func newPartition(t *testing.T, client redis.UniversalClient, clock *storetest.Clock, prefix string) *partition {
	t.Helper()
	store, err := redisstore.New(client, redisstore.WithClock(clock.Now), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return &partition{Store: store}
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
