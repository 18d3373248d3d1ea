package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

func TestDialValidates(t *testing.T) {
	for _, addrs := range [][]string{nil, {""}, {"a:1,b:2"}, {"garbage"}, {"127.0.0.1:"}, {"127.0.0.1:99999"}, {"10.0.0.5:6379", "10.0.0.6"}} {
		if _, err := redisstore.Dial(addrs); err == nil {
			t.Errorf("Dial(%q) succeeded", addrs)
		}
	}
	if _, err := redisstore.Dial([]string{"127.0.0.1:1"}, redisstore.WithExpiryMargin(0)); err == nil {
		t.Error("Dial accepted an invalid option")
	}
}

// TestDial: one address is a standalone server, several are a Cluster; Close closes
// the client Dial made.
func TestDial(t *testing.T) {
	for name, addrs := range map[string]func(testing.TB) []string{
		"Redis":   func(t testing.TB) []string { return []string{servers.Server(t).Addr} },
		"Cluster": func(t testing.TB) []string { return servers.Cluster(t).Addrs() },
	} {
		t.Run(name, func(t *testing.T) {
			store, err := redisstore.Dial(addrs(t), redisstore.WithPrefix(uniquePrefix()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := store.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			policies := []core.Policy{
				core.MustPolicy("dial-a", core.TokenBucket, core.PerSecond(2)),
				core.MustPolicy("dial-b", core.SlidingLog, core.PerSecond(3)),
			}
			for i := 0; i < 3; i++ {
				reqs := []core.Request{{Policy: policies[0], Key: "k"}, {Policy: policies[1], Key: fmt.Sprint("k", i)}}
				allowed, err := store.DecideStack(ctx, reqs, make([]core.Result, 2))
				if err != nil || allowed != (i < 2) {
					t.Fatalf("stack %d: allowed=%v err=%v", i, allowed, err)
				}
			}
			store.Close()
			if err := store.Ping(ctx); !errors.Is(err, redisstore.ErrClosed) {
				t.Fatalf("after Close: %v", err)
			}
		})
	}
}

// TestSlotOfMatchesCluster compares the store's slot computation with CLUSTER KEYSLOT.
func TestSlotOfMatchesCluster(t *testing.T) {
	client := clusterClient(t)
	store, err := redisstore.New(client, redisstore.WithHashTag(redisstore.TagByKey))
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("slots", core.GCRA, core.PerSecond(1))
	for i := 0; i < 200; i++ {
		for _, key := range []string{fmt.Sprint("user-", i), fmt.Sprintf("203.0.%d.%d", i/7, i), fmt.Sprintf("{odd}%d}{", i)} {
			for _, k := range []string{key, store.Key(p, key)} {
				want, err := client.ClusterKeySlot(context.Background(), k).Result()
				if err != nil {
					t.Fatal(err)
				}
				if got := redisstore.SlotOf(k); int64(got) != want {
					t.Fatalf("slot of %q: %d, Redis says %d", k, got, want)
				}
			}
		}
	}
}
