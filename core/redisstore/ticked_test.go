package redisstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// tickedStore is a store on a real server whose clock the test sets (in ms since the
// epoch), with an expiry margin of 1 ms.
func tickedStore(t *testing.T) (*redisstore.Store, *redis.Client, *atomic.Int64) {
	t.Helper()
	client := standaloneClient(t)
	var ms atomic.Int64
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()), redisstore.WithExpiryMargin(time.Millisecond),
		redisstore.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
	if err != nil {
		t.Fatal(err)
	}
	return store, client, &ms
}

// expireTime is the absolute instant a key expires at, as the server keeps it.
func expireTime(t *testing.T, client *redis.Client, key string) time.Duration {
	t.Helper()
	at, err := client.PExpireTime(context.Background(), key).Result()
	if err != nil || at <= 0 {
		t.Fatalf("PEXPIRETIME %s: %v %v, want an expiry", key, at, err)
	}
	return at
}

// admitAt returns a function that sets the store's clock to at (ms since the epoch)
// and makes n decisions of p for key, each of which must be admitted.
func admitAt(t *testing.T, store *redisstore.Store, ms *atomic.Int64, p core.Policy, key string) func(at int64, n int) {
	return func(at int64, n int) {
		t.Helper()
		ms.Store(at)
		for i := 0; i < n; i++ {
			if res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: key}); err != nil || !res.Allowed {
				t.Fatalf("%s at %d: %+v %v", key, at, res, err)
			}
		}
	}
}

// TestTickedRefusalLeavesStateAsItWas: a refusal of a ticked policy's lean script
// charges with INCRBY and takes it back with DECRBY; the key's value and its absolute
// expiry stay exactly as they were, and the decisions after it are the memory store's.
func TestTickedRefusalLeavesStateAsItWas(t *testing.T) {
	store, client, ms := tickedStore(t)
	ctx := context.Background()
	ms.Store(1_767_225_600_000)
	for _, alg := range []core.Algorithm{core.GCRA, core.LeakyBucket} {
		p := core.MustPolicy("ticked-refusal", alg, core.PerMinute(3))
		key := store.Key(p, "alice")
		for {
			res, err := store.Decide(ctx, core.Request{Policy: p, Key: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Allowed {
				break
			}
		}
		value, expiry := client.Get(ctx, key).Val(), expireTime(t, client, key)
		for i := 0; i < 5; i++ {
			res, err := store.Decide(ctx, core.Request{Policy: p, Key: "alice"})
			if err != nil || res.Allowed || res.RetryAfter != 20*time.Second {
				t.Fatalf("%v: refusal %d: %+v %v, want refused, retry after 20s", alg, i, res, err)
			}
			if v, e := client.Get(ctx, key).Val(), expireTime(t, client, key); v != value || e != expiry {
				t.Fatalf("%v: refusal %d left %q expiring at %v, want %q at %v", alg, i, v, e, value, expiry)
			}
		}
	}
}

// TestTickedKeyRenewsItsTTLOncePerGranule: charges that keep a ticked TAT within its
// granule (1024 units, here 1024 ms) send no expiry at all; the charge that carries the
// TAT into the next granule sets a later one; a charge with the TAT before now writes
// the new TAT and keeps the TTL when the granule is the same. Every expiry lies at or
// after the TAT.
func TestTickedKeyRenewsItsTTLOncePerGranule(t *testing.T) {
	store, client, ms := tickedStore(t)
	ctx := context.Background()
	p := core.MustPolicy("ticked-granule", core.GCRA, core.PerSecond(1000)) // a unit is a token, one per ms
	if got := redisstore.TickedGranule(p); got != 1024*time.Millisecond {
		t.Fatalf("granule %v, want 1024ms", got)
	}
	key := store.Key(p, "bob")
	start := int64(1_767_225_600_512) / 1024 * 1024 // a granule starts at start
	decide := admitAt(t, store, ms, p, "bob")
	counts := func() (sets, expires int64) {
		return commandCalls(t, client, "set"), commandCalls(t, client, "pexpire")
	}
	sets0, expires0 := counts()
	decide(start, 600) // a missing key is set with its expiry, then charged in place: TAT start+600
	first := expireTime(t, client, key)
	if sets, expires := counts(); sets-sets0 != 1 || expires-expires0 != 0 {
		t.Fatalf("600 charges in one granule sent %d SETs and %d PEXPIREs, want 1 and 0", sets-sets0, expires-expires0)
	}
	if v := client.Get(ctx, key).Val(); v != strconv.FormatInt(start+600, 10) {
		t.Fatalf("TAT %q, want %d", v, start+600)
	}
	// The expiry is the granule's end and the margin: 1025 ms after now, beyond the TAT.
	if ttl := client.PTTL(ctx, key).Val(); ttl <= 600*time.Millisecond || ttl > 1025*time.Millisecond {
		t.Fatalf("TTL %v, want within (600ms, 1025ms]", ttl)
	}
	incrs := commandCalls(t, client, "incrby")
	decide(start+900, 1) // the TAT lay before now: moved up to now + 1 in place, same granule, same expiry
	if sets, _ := counts(); sets-sets0 != 1 || commandCalls(t, client, "incrby")-incrs != 2 || expireTime(t, client, key) != first {
		t.Fatalf("an idle charge in the same granule: %d SETs, %d INCRBYs, expiry %v, want 1, 2 and %v",
			sets-sets0, commandCalls(t, client, "incrby")-incrs, expireTime(t, client, key), first)
	}
	if v := client.Get(ctx, key).Val(); v != strconv.FormatInt(start+901, 10) {
		t.Fatalf("TAT %q, want %d", v, start+901)
	}
	decide(start+900, 123) // TAT start+1024: the next granule's first unit
	if _, expires := counts(); expires-expires0 != 1 || expireTime(t, client, key) <= first {
		t.Fatalf("crossing a granule sent %d PEXPIREs (expiry %v, was %v), want 1 and later", expires-expires0, expireTime(t, client, key), first)
	}
}
