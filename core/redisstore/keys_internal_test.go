package redisstore

import (
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

func TestStateKeyLayout(t *testing.T) {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	loginIP := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
	tags := func(policy, key string) string {
		if tag := TagPolicies("login", "login-ip")(policy, key); tag != "" {
			return tag
		}
		return TagByKey(policy, key)
	}
	plain, err := New(nilClient{})
	if err != nil {
		t.Fatal(err)
	}
	tagged, err := New(nilClient{}, WithPrefix("app:rl:"), WithHashTag(tags))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		store  *Store
		policy core.Policy
		key    string
		want   string
	}{
		{plain, api, "user-42", "rl:{api#tb.10.1000.20:user-42}"},
		{plain, loginIP, "203.0.113.9", "rl:{login-ip#tb.20.60000.20:203.0.113.9}"},
		{plain, api, "a}b{c", "rl:{api#tb.10.1000.20:a%7Db%7Bc}"},
		{plain, api, "50%", "rl:{api#tb.10.1000.20:50%25}"},
		{tagged, loginIP, "203.0.113.9", "app:rl:{login}login-ip#tb.20.60000.20:203.0.113.9"},
		{tagged, api, "tenant-7", "app:rl:{tenant-7}api#tb.10.1000.20:tenant-7"},
		{tagged, api, "{x}", "app:rl:{%7Bx%7D}api#tb.10.1000.20:%7Bx%7D"},
	} {
		if got := c.store.Key(c.policy, c.key); got != c.want {
			t.Errorf("Key(%s, %q) = %q, want %q", c.policy.Name(), c.key, got, c.want)
		}
	}
	// The policy ID keeps apart names and keys that concatenate alike.
	a := core.MustPolicy("login:ip", core.FixedWindow, core.PerMinute(5))
	b := core.MustPolicy("login", core.FixedWindow, core.PerMinute(5))
	if plain.Key(a, "x") == plain.Key(b, "ip:x") {
		t.Errorf("policies %q and %q share a key", a.Name(), b.Name())
	}
}

// TestStateKeyHashTagIsTheWholeKey checks that user input cannot end a state key's
// hash tag early: Redis Cluster hashes the whole policy ID and key, so keys that
// differ only after a '}' still get their own tags (and, all but by chance, slots).
func TestStateKeyHashTagIsTheWholeKey(t *testing.T) {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	plain, err := New(nilClient{})
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for _, key := range []string{"z}1", "z}2", "z{1}", "z%7D1", "z%1", "{}", "}{", "%7B%7D"} {
		full := plain.Key(api, key)
		tag := hashTagOf(full)
		if want := api.ID() + ":" + escapeHashTag(key); tag != want {
			t.Errorf("Key(%q) = %q hashes %q, want %q", key, full, tag, want)
		}
		if other, ok := tags[tag]; ok {
			t.Errorf("keys %q and %q share the hash tag %q", other, key, tag)
		}
		tags[tag] = key
	}
}

// TestSlotOf compares slotOf with slots that Redis's CLUSTER KEYSLOT reports.
func TestSlotOf(t *testing.T) {
	for key, want := range map[string]int{
		"foo":                  12182,
		"bar":                  5061,
		"somekey":              11058,
		"{user1000}.following": 3443,
		"{user1000}.followers": 3443,
		"foo{}{bar}":           8363,
		"foo{{bar}}zap":        4015,
		"foo{bar}{zap}":        5061,
		"":                     0,
	} {
		if got := slotOf(key); got != want {
			t.Errorf("slotOf(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestGroups(t *testing.T) {
	s := &Store{topology: cluster}
	keys := []string{"rl:{login}a", "rl:{x}b", "rl:{login}c", "rl:{y}d"}
	groups := s.groups(keys)
	if len(groups) != 3 || len(groups[0]) != 2 || groups[0][1] != 2 {
		t.Errorf("cluster groups %v, want [[0 2] [1] [3]]", groups)
	}
	if g := s.groups([]string{"rl:{login}a", "rl:{login}b"}); g != nil {
		t.Errorf("keys of one slot split into %v", g)
	}
	s.topology = standalone
	if g := s.groups(keys); g != nil {
		t.Errorf("standalone split a stack into %v", g)
	}
	s.split = true
	if g := s.groups(keys[:2]); len(g) != 2 {
		t.Errorf("split stacks: %v", g)
	}
	s.split, s.topology = false, ring
	if g := s.groups(keys); len(g) != 3 {
		t.Errorf("ring groups %v", g)
	}
}
