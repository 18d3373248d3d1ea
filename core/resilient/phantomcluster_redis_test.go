package resilient_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestRedisClusterTimedOutAcquireLeavesNoPhantom is TestRedisTimedOutAcquireLeavesNoPhantom
// on a real 3-master Cluster: the master that owns the key's slot is stopped while
// the acquire waits in its socket, the call passes its deadline and Local mode
// grants the lease; resumed, the master runs the script and holds the lease too (a
// phantom, read on that master). Once the request ends and a release pass runs,
// the key holds no lease on Redis.
func TestRedisClusterTimedOutAcquireLeavesNoPhantom(t *testing.T) {
	cp := phantomOnCluster(t, upload(1))
	if got := slotsHeld(t, cp.shared.Store); got != 1 {
		t.Fatalf("lease 1 running locally: Redis holds %d slots; want 1, the phantom", got)
	}
	if err := cp.r.store.Release(context.Background(), upload(1), 1); err != nil {
		t.Fatal(err)
	}
	cp.r.store.ReleasePass()
	if got := cp.leases(t); len(got) != 0 {
		t.Errorf("the request ended: the master holds leases %v; want none", got)
	}
	if got := slotsHeld(t, cp.shared.Store); got != 0 {
		t.Errorf("the request ended: Redis holds %d slots; want 0", got)
	}
	if n := cp.r.store.EndedLeases(); n != 0 {
		t.Errorf("%d ended leases left in the book; want 0", n)
	}
}

// clusterPhantomDeadline is the deadline of phantomOnCluster's store. The stopped
// master makes the acquire wait it out whatever its length (the test resumes the
// master after the call ended), so it is long: a loaded machine never turns the
// calls made once the master answers again into timeouts.
const clusterPhantomDeadline = time.Second

// clusterPhantom is a Store over a 3-master Cluster with a local lease whose phantom
// the master that owns its key's slot holds.
type clusterPhantom struct {
	r      *rig
	shared *partition
	master *redis.Client // a client of the master that owns the key's slot
	key    string        // the key's Redis key
}

// phantomOnCluster starts a 3-master Cluster, and a Store over it whose breakers
// stay closed and whose release passes the test makes. It stops the master that
// owns the slot of req's key (SIGSTOP: like DEBUG SLEEP, which the Cluster's nodes
// do not enable, it keeps its connections and answers nothing), decides req, which
// must be granted though its call timed out, resumes the master, and waits until
// the master has run the acquire: it holds req's lease, the phantom, and nothing
// else on the key.
func phantomOnCluster(t *testing.T, req core.Request) *clusterPhantom {
	t.Helper()
	c := redistest.StartCluster(t, 3)
	client := c.NewClient()
	t.Cleanup(func() { client.Close() })
	clock := storetest.NewClock()
	cp := &clusterPhantom{shared: newPartition(t, client, clock, "phantom:")}
	cp.r = newRigOver(t, clock, cp.shared, neverOpen, resilient.WithDeadline(clusterPhantomDeadline))
	cp.r.store.ReleasePassesByHand()
	cp.key = cp.shared.Key(req.Policy, req.Key)
	m := c.MasterOf(resilient.SlotOf(cp.key))
	srv := c.Servers[m]
	cp.master = srv.NewClient()
	t.Cleanup(func() { cp.master.Close() })
	ctx := context.Background()

	// A warm connection to the master and the script loaded there: the acquire is
	// then one write that waits in the stopped master's socket.
	warmKey, err := c.KeyOn(m, "warm-", func(key string) string { return cp.shared.Key(uploads, key) })
	if err != nil {
		t.Fatal(err)
	}
	warm := core.Request{Policy: uploads, Key: warmKey, Lease: 99}
	if res, err := cp.r.store.Decide(ctx, warm); err != nil || !res.Allowed {
		t.Fatalf("warm-up: %+v, %v", res, err)
	}
	if err := cp.r.store.Release(ctx, warm, 99); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Resume() })
	res, err := cp.r.store.Decide(ctx, req)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if err != nil || !res.Allowed {
		t.Fatalf("an acquire past its deadline, Local mode: %+v, %v; want a local lease", res, err)
	}
	waitFor(t, "the resumed master runs the acquire", func() bool { return len(cp.leases(t)) > 0 })
	if got := cp.leases(t); !slices.Equal(got, []uint64{req.Lease}) {
		t.Fatalf("the master woke and ran the acquire: it holds leases %v; want [%d], the phantom", got, req.Lease)
	}
	return cp
}

// leases is the IDs of the leases the master holds on the key, in the order taken,
// read with GET: a concurrency key's state is "id expires cost" per lease, joined by
// commas (core/redisstore/lua/concurrency.lua). A missing key holds none. The test's
// clock stands still, so every lease read is live.
func (cp *clusterPhantom) leases(t *testing.T) []uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	value, err := cp.master.Get(ctx, cp.key).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		t.Fatalf("GET %s on its master: %v", cp.key, err)
	}
	var ids []uint64
	for _, lease := range strings.Split(value, ",") {
		id, _, _ := strings.Cut(lease, " ")
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			t.Fatalf("GET %s: %q is not a concurrency state", cp.key, value)
		}
		ids = append(ids, n)
	}
	return ids
}
