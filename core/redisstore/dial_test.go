package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
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
	for _, o := range []*redis.UniversalOptions{nil, {}, {MasterName: "m"}, {Addrs: []string{"garbage"}}, {MasterName: "m", Addrs: []string{"127.0.0.1:26379", "x"}}} {
		if _, err := redisstore.DialUniversal(o); err == nil {
			t.Errorf("DialUniversal(%+v) succeeded", o)
		}
	}
}

// TestDial: one address is a standalone server, several are a Cluster; DialUniversal
// reaches a server behind a password and a Sentinel's master. Close closes the client
// Dial made.
func TestDial(t *testing.T) {
	for name, dial := range map[string]func(testing.TB) (*redisstore.Store, error){
		"Redis": func(t testing.TB) (*redisstore.Store, error) {
			return redisstore.Dial([]string{servers.Server(t).Addr}, redisstore.WithPrefix(uniquePrefix()))
		},
		"Cluster": func(t testing.TB) (*redisstore.Store, error) {
			return redisstore.Dial(servers.Cluster(t).Addrs(), redisstore.WithPrefix(uniquePrefix()))
		},
		"password": func(t testing.TB) (*redisstore.Store, error) {
			srv := redistest.StartServer(t)
			admin := srv.NewClient()
			defer admin.Close()
			if err := admin.ConfigSet(context.Background(), "requirepass", "s3cret").Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := redisstore.DialUniversal(&redis.UniversalOptions{Addrs: []string{srv.Addr}, Password: "wrong"}); err != nil {
				t.Fatal(err) // dialling does not wait for the server; the wrong password shows at Ping
			}
			return redisstore.DialUniversal(&redis.UniversalOptions{Addrs: []string{srv.Addr}, Password: "s3cret"})
		},
		"Sentinel": func(t testing.TB) (*redisstore.Store, error) {
			sentinel := redistest.StartSentinel(t, redistest.StartServer(t), "dial", 5*time.Second)
			return redisstore.DialUniversal(&redis.UniversalOptions{MasterName: "dial", Addrs: []string{sentinel.Addr}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			store, err := dial(t)
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
