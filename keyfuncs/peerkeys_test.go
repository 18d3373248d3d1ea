package keyfuncs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// uncachedKey is what Key computes without the peer cache.
func uncachedKey(c *ClientIP, remoteAddr string) (string, error) {
	addr, err := c.Addr(newRequest(remoteAddr))
	if err != nil {
		return "", err
	}
	return c.KeyFor(addr), nil
}

// TestKeyCachedEqualsComputed asks, from concurrent goroutines, for the keys of
// far more peers than the cache holds (so that slots collide and are replaced),
// in every spelling a RemoteAddr can take, and checks each against the key
// computed without the cache.
func TestKeyCachedEqualsComputed(t *testing.T) {
	c := mustClientIP(t, ClientIPConfig{IPv6Prefix: 48})
	if c.peerKeys == nil {
		t.Fatal("a ClientIP trusting no proxy has no peer cache")
	}
	var peers []string
	for i := range 3 * peerKeySlots {
		peers = append(peers,
			fmt.Sprintf("198.51.%d.%d:%d", i>>8, i&0xff, 1024+i),
			fmt.Sprintf("[2001:db8:%x::%x]:443", i, i),
			fmt.Sprintf("[::ffff:192.0.2.%d]:80", i&0xff),
			fmt.Sprintf("fe80::%x%%eth0", i),
		)
	}
	peers = append(peers, "", "unix", "@", "192.0.2.1:port", "[::1", "192.0.2.300:1")
	want := make(map[string]string, len(peers))
	for _, p := range peers {
		key, err := uncachedKey(c, p)
		if err != nil {
			if !errors.Is(err, ErrNoClientIP) {
				t.Fatalf("%q: %v", p, err)
			}
			key = "error"
		}
		want[p] = key
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 40_000 {
				// Mostly a few hot peers, as keep-alive connections are.
				p := peers[rng.IntN(len(peers))]
				if rng.IntN(2) == 0 {
					p = peers[rng.IntN(8)]
				}
				key, err := c.Key(newRequest(p))
				if err != nil {
					key = "error"
				}
				if key != want[p] {
					t.Errorf("Key(%q) = %q, %v; want %q", p, key, err, want[p])
					return
				}
			}
		}()
	}
	wg.Wait()
	hits := 0
	for _, p := range peers[:8] {
		if key, slot, _ := c.peerKeys.lookup(p); slot == nil && key == want[p] {
			hits++
		}
	}
	if hits == 0 {
		t.Error("none of the hot peers is cached")
	}
}

// TestKeyTrustingProxiesHasNoPeerCache: behind trusted proxies the key depends on
// the forwarding headers too, so it is never remembered by RemoteAddr alone.
func TestKeyTrustingProxiesHasNoPeerCache(t *testing.T) {
	c := mustClientIP(t, ClientIPConfig{TrustedProxies: prefixes(t, "10.0.0.0/8")})
	if c.peerKeys != nil {
		t.Fatal("a ClientIP trusting proxies has a peer cache")
	}
	for _, tc := range []struct{ xff, want string }{
		{"203.0.113.9", "ip:203.0.113.9"},
		{"203.0.113.10", "ip:203.0.113.10"},
	} {
		if key, err := c.Key(newRequest("10.0.0.1:443", xff(tc.xff))); err != nil || key != tc.want {
			t.Errorf("Key = %q, %v; want %q", key, err, tc.want)
		}
	}
}

// TestKeyHotPeerReplacesStaleEntry: a peer whose slot holds another peer's entry
// (an old connection, say) is remembered within eight requests.
func TestKeyHotPeerReplacesStaleEntry(t *testing.T) {
	c := mustClientIP(t, ClientIPConfig{})
	stale := "198.51.100.1:1024"
	_, staleSlot, _ := c.peerKeys.lookup(stale)
	hot := ""
	for port := 1025; hot == ""; port++ {
		if _, slot, _ := c.peerKeys.lookup(fmt.Sprintf("203.0.113.9:%d", port)); slot == staleSlot {
			hot = fmt.Sprintf("203.0.113.9:%d", port)
		}
	}
	if _, err := c.Key(newRequest(stale)); err != nil {
		t.Fatal(err)
	}
	if _, slot, _ := c.peerKeys.lookup(stale); slot != nil {
		t.Fatal("a peer is not remembered in an empty slot")
	}
	for range 8 {
		if key, err := c.Key(newRequest(hot)); err != nil || key != "ip:203.0.113.9" {
			t.Fatalf("Key = %q, %v", key, err)
		}
	}
	if key, slot, _ := c.peerKeys.lookup(hot); slot != nil || key != "ip:203.0.113.9" {
		t.Fatalf("after eight requests the hot peer is not remembered (key %q)", key)
	}
}
