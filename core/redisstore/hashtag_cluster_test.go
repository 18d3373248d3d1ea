package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestClusterBracesInKeysKeepTheirOwnSlots decides for usernames "z}1" … "z}60" on a
// real 3-master Redis Cluster and asks Redis which slot each state key is in. A '}'
// in user input used to end the hash tag, so all sixty shared one slot; now each
// (policy, key) hashes as a whole, and sixty keys spread over the slots.
func TestClusterBracesInKeysKeepTheirOwnSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-master Redis Cluster; skipped in -short mode")
	}
	cluster := redistest.StartCluster(t, 3)
	client := cluster.NewClient()
	defer client.Close()
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	account := core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const users = 60
	slots := map[int64]int{}
	for i := 1; i <= users; i++ {
		key := fmt.Sprintf("form:username:z}%d", i)
		res, err := store.Decide(ctx, core.Request{Policy: account, Key: key, Cost: 1})
		if err != nil {
			t.Fatalf("Decide(%q): %v", key, err)
		}
		if !res.Allowed {
			t.Fatalf("first request of %q refused", key)
		}
		stateKey := store.Key(account, key)
		if n, err := client.Exists(ctx, stateKey).Result(); err != nil || n != 1 {
			t.Fatalf("state key %q of %q: exists=%d, err=%v", stateKey, key, n, err)
		}
		slot, err := client.ClusterKeySlot(ctx, stateKey).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot]++
	}
	t.Logf("%d usernames with '}' landed in %d distinct slots", users, len(slots))
	// Sixty random slots out of 16384 collide at most a few times (the chance of
	// more than 5 collisions is below 1e-6).
	if len(slots) < users-5 {
		t.Errorf("%d usernames share %d slots: user input shortens the hash tag", users, len(slots))
	}
}
