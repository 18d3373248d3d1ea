package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"golang.org/x/text/unicode/norm"
)

// The identity attacks of identity_test.go, on the path users deploy: -store redis
// on a real 3-master Redis Cluster, behind -on-store-error local, on every router.

// clusterServer starts the server on every router in turn against one Cluster,
// emptied between routers.
func clusterServer(t *testing.T, c *redistest.Cluster, router string, args ...string) *testServer {
	t.Helper()
	flushCluster(t, c)
	return startServer(t, router, append([]string{"-store", "redis", "-redis-addrs", strings.Join(c.Addrs(), ",")}, args...)...)
}

// TestClusterInventedAPIKeysAreChargedToTheClient: 60 invented X-API-Key values
// from one client earn no bucket of their own on a Cluster either: exactly the
// client address's budget (burst 10, refilling one token per 6 minutes) is
// answered 401, the rest 429; no Redis key holds an invented key; demo-key has its
// own bucket.
func TestClusterInventedAPIKeysAreChargedToTheClient(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			srv := clusterServer(t, cluster, router, "-algorithm", "token_bucket", "-limit", "10", "-period", "1h")
			c := client(t, "127.0.0.1")
			counts := map[int]int{}
			for i := range 60 {
				r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil, "X-API-Key", fmt.Sprintf("invented-%d", i))
				counts[r.status]++
			}
			t.Logf("%s: 60 invented keys over the Cluster: %v (budget 10)", router, counts)
			if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 50 {
				t.Fatalf("60 invented keys: %v, want exactly 10 × 401 then 50 × 429", counts)
			}
			if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil); r.status != http.StatusTooManyRequests {
				t.Fatalf("no key after the guesses: %d, want 429 (the client's own budget is spent)", r.status)
			}
			if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil, "X-API-Key", "demo-key"); r.status != http.StatusOK {
				t.Fatalf("demo-key: %d %s, want 200 (its own bucket)", r.status, r.body)
			}
			if keys := clusterKeys(t, cluster, "invented"); len(keys) != 0 {
				t.Fatalf("invented keys reached Redis: %q", keys)
			}
			if keys := clusterKeys(t, cluster, "demo-key"); len(keys) != 0 {
				t.Fatalf("a raw API key is in a Redis key: %q", keys)
			}
			if keys := clusterKeys(t, cluster, ":ip:127.0.0.1}"); len(keys) != 1 {
				t.Fatalf("state of the client address: %q, want one key", keys)
			}
		})
	}
}

// TestClusterLoginIdentities: on a Cluster, rotating spellings of one username
// (case, NFC/NFD) share one account budget of 5 a minute, and a decoy in the query
// beside each is refused without reaching Redis;
// usernames holding braces ("z}1" … "z}20") cannot choose their hash tag: each
// lands in a slot of its own and has its own budget. Every attempt comes from its
// own /24, so that only the account policy can refuse.
func TestClusterLoginIdentities(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			srv := clusterServer(t, cluster, router)
			attempt := 0
			post := func(target, username, password string) int {
				attempt++
				peer := fmt.Sprintf("10.%d.%d.1:1000", attempt/256, attempt%256)
				return postLocal(srv.handler, target, peer, loginForm(username, password).Encode()).status
			}
			for _, spellings := range [][]string{
				{"alice", "Alice", "ALICE", "aLice", "alICE", "ALIce"},
				{norm.NFC.String("josé"), norm.NFD.String("josé"), norm.NFC.String("JOSÉ"), norm.NFD.String("José"), "jos\u00e9", norm.NFD.String("JOSé")},
			} {
				for i, name := range spellings {
					password, want := "guess", http.StatusUnauthorized
					if i == len(spellings)-1 {
						password, want = loginPassword, http.StatusTooManyRequests
					}
					if got := post(fmt.Sprintf("/login?username=decoy%d", attempt), name, password); got != http.StatusBadRequest {
						t.Fatalf("spelling %d %q with a decoy in the query: %d, want 400", i, name, got)
					}
					if got := post("/login", name, password); got != want {
						t.Fatalf("spelling %d %q: %d, want %d", i, name, got, want)
					}
				}
			}
			for _, user := range []string{"alice", "josé"} {
				if keys := clusterKeys(t, cluster, "field:username:"+user); len(keys) != 1 {
					t.Fatalf("account state of %s: %q, want one key", user, keys)
				}
			}
			if keys := clusterKeys(t, cluster, "decoy"); len(keys) != 0 {
				t.Fatalf("decoys reached Redis: %q", keys)
			}

			const braced = 20
			for n := 1; n <= braced; n++ {
				name := fmt.Sprintf("z}%d", n)
				for i := 1; i <= 6; i++ {
					want := http.StatusUnauthorized
					if i == 6 {
						want = http.StatusTooManyRequests
					}
					if got := post("/login", name, "guess"); got != want {
						t.Fatalf("%q attempt %d: %d, want %d (5 a minute, its own budget)", name, i, got, want)
					}
				}
			}
			keys := clusterKeys(t, cluster, "field:username:z")
			if len(keys) != braced {
				t.Fatalf("%d account keys for %d braced usernames: %q", len(keys), braced, keys)
			}
			client := cluster.NewClient()
			defer client.Close()
			slots := map[int64]string{}
			for _, k := range keys {
				slot, err := client.ClusterKeySlot(context.Background(), k).Result()
				if err != nil {
					t.Fatal(err)
				}
				if prev, ok := slots[slot]; ok {
					t.Fatalf("%q and %q share slot %d: a username chose its hash tag", prev, k, slot)
				}
				slots[slot] = k
			}
			t.Logf("%s: %d braced usernames in %d distinct slots, e.g. %q", router, braced, len(slots), keys[0])
		})
	}
}
