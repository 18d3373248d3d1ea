package redisstore_test

import (
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// Node names the master that serves a key, as the Cluster's own slot map does, and
// the one server of a standalone deployment for every key (core/resilient groups a
// stuck master's keys by it).
func TestNodeNamesTheMasterServingTheKey(t *testing.T) {
	c := servers.Cluster(t)
	store, err := redisstore.Dial(c.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	for master, srv := range c.Servers {
		key, err := c.KeyOn(master, "user:", func(key string) string { return store.Key(p, key) })
		if err != nil {
			t.Fatal(err)
		}
		if got := store.Node(store.Key(p, key)); got != srv.Addr {
			t.Errorf("Node of %s, on master %d: %q, want %q", key, master, got, srv.Addr)
		}
	}

	srv := servers.Server(t)
	standalone, err := redisstore.Dial([]string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer standalone.Close()
	for _, key := range []string{"user:1", "user:2", "{x}user:3"} {
		if got := standalone.Node(standalone.Key(p, key)); got != srv.Addr {
			t.Errorf("Node of %s on a standalone server: %q, want %q", key, got, srv.Addr)
		}
	}
}
