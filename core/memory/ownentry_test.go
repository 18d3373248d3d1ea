package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/ownentry"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// A decision on the key's own entry only (core/resilient's seeds) never reaches the
// overflow entry: in a shard full of keys that still restrict their clients it
// decides and charges nothing, and once a recovered entry makes room it charges the
// key's own new entry, which keeps the charge.
func TestDecisionOnTheKeysOwnEntryNeverOverflows(t *testing.T) {
	clock := storetest.NewClock()
	store, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(2), memory.WithShards(1))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	for _, key := range []string{"a", "b"} {
		if res, own, err := ownentry.Decide(ctx, store, core.Request{Policy: p, Key: key}); err != nil || !own || !res.Allowed {
			t.Fatalf("%s, with room: %+v, own %v, %v; want admitted on its own entry", key, res, own, err)
		}
	}
	seed := core.Request{Policy: p, Key: "k", Cost: 5}
	if res, own, err := ownentry.Decide(ctx, store, seed); err != nil || own || res.Allowed {
		t.Fatalf("no room: %+v, own %v, %v; want nothing decided", res, own, err)
	}
	if st := store.Stats(); st.Overflowed != 0 || st.Keys != 2 {
		t.Fatalf("no room: stats %+v, want 2 keys and no overflow", st)
	}
	// The overflow entry was not charged: a plain decision finds it full.
	if res, _ := store.Decide(ctx, core.Request{Policy: p, Key: "other", Cost: 5}); !res.Allowed {
		t.Fatalf("the overflow entry after the own-entry decision: %+v, want full", res)
	}
	clock.Advance(12 * time.Second) // a and b earn back their unit
	if res, own, err := ownentry.Decide(ctx, store, seed); err != nil || !own || !res.Allowed || res.Remaining != 0 {
		t.Fatalf("room made: %+v, own %v, %v; want charged on its own entry, 0 left", res, own, err)
	}
	if res, own, err := ownentry.Decide(ctx, store, core.Request{Policy: p, Key: "k"}); err != nil || !own || res.Allowed {
		t.Fatalf("the key's next decision: %+v, own %v, %v; want refused on its own entry", res, own, err)
	}
	if res, _ := store.Decide(ctx, core.Request{Policy: p, Key: "k"}); res.Allowed {
		t.Fatalf("a plain decision of the key: %+v, want refused on its own entry", res)
	}
}

// The mark travels in the context, so a store wrapping a memory store passes it on:
// with no room, the wrapped store decides nothing either; with room, the key's own
// entry is charged.
func TestDecisionOnTheKeysOwnEntryThroughAWrapper(t *testing.T) {
	clock := storetest.NewClock()
	store := struct{ core.Store }{memory.MustNew(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(1), memory.WithShards(1))}
	defer store.Close()
	ctx := context.Background()
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	res, own, err := ownentry.Decide(ctx, store, core.Request{Policy: p, Key: "k", Cost: 2})
	if err != nil || !own || !res.Allowed || res.Remaining != 3 {
		t.Fatalf("with room: %+v, own %v, %v; want charged on its own entry, 3 left", res, own, err)
	}
	if res, own, err := ownentry.Decide(ctx, store, core.Request{Policy: p, Key: "other", Cost: 2}); err != nil || own || res.Allowed {
		t.Fatalf("no room: %+v, own %v, %v; want nothing decided", res, own, err)
	}
	if _, err := store.Decide(ownentry.Only(ctx), core.Request{Policy: p, Key: "other"}); !errors.Is(err, ownentry.ErrNoRoom) || !strings.Contains(err.Error(), `"api"`) {
		t.Fatalf("the store's own error: %v, want ownentry.ErrNoRoom naming the policy", err)
	}
}
