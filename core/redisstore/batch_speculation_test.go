package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// getCalls is how many GET commands the server has run.
func getCalls(t *testing.T, client *redis.Client) int64 { return commandCalls(t, client, "get") }

// commandCalls is how many times the server has run a command (lower case), from INFO
// commandstats (calls from scripts count too).
func commandCalls(t *testing.T, client *redis.Client, command string) int64 {
	t.Helper()
	stats, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var calls int64
	if i := strings.Index(stats, "cmdstat_"+command+":calls="); i >= 0 {
		if _, err := fmt.Sscanf(stats[i:], "cmdstat_"+command+":calls=%d", &calls); err != nil {
			t.Fatal(err)
		}
	}
	return calls
}

// TestBatchSpeculation: a batch of keys without state decides them without a GET
// (each writes with SET NX); a batch whose first key has state misses once, decides
// that key again with a GET, and reads every key after it; a key of another type met
// while speculating fails its own decision with WRONGTYPE and keeps its value. Every
// result is what deciding alone gives, which TestBatchesDecideAsAlone checks field for
// field; here the counts of GETs show which path each batch took. (Ticked policies do
// not speculate: TestTickedBatchesChargeInPlace.)
func TestBatchSpeculation(t *testing.T) {
	client := standaloneClient(t)
	store := newBatchingStore(t, client)
	ctx := context.Background()
	p := core.MustPolicy("speculation", core.TokenBucket, core.PerMinute(10))
	reqs := usersOf(p, 8)
	flush := func(reqs []core.Request, wantGets int64) ([]core.Result, []error) {
		t.Helper()
		return flushCounting(t, store, client, reqs, wantGets, -1)
	}

	got, errs := flush(reqs, 0) // every key without state: no GET
	for i := range reqs {
		if errs[i] != nil || !got[i].Allowed || got[i].Remaining != 9 {
			t.Fatalf("fresh key %d: %+v %v, want admitted with 9 remaining", i, got[i], errs[i])
		}
		if ttl, err := client.PTTL(ctx, store.Key(p, reqs[i].Key)).Result(); err != nil || ttl <= 0 {
			t.Fatalf("fresh key %d: TTL %v %v, want one", i, ttl, err)
		}
	}

	got, errs = flush(reqs, int64(len(reqs))) // every key has state: one miss, then a GET each
	for i := range reqs {
		if errs[i] != nil || !got[i].Allowed || got[i].Remaining != 8 {
			t.Fatalf("second decision on key %d: %+v %v, want admitted with 8 remaining", i, got[i], errs[i])
		}
	}

	if err := client.HSet(ctx, store.Key(p, "a-hash"), "field", "value").Err(); err != nil {
		t.Fatal(err)
	}
	mixed := []core.Request{{Policy: p, Key: "a-hash"}, {Policy: p, Key: "fresh"}}
	got, errs = flush(mixed, 2) // the miss on the hash ends speculation: both read their key
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "WRONGTYPE") {
		t.Fatalf("the hash: %+v %v, want WRONGTYPE", got[0], errs[0])
	}
	if typ, err := client.Type(ctx, store.Key(p, "a-hash")).Result(); err != nil || typ != "hash" {
		t.Fatalf("the hash is now a %q (%v): a speculating decision must not write over a key", typ, err)
	}
	if errs[1] != nil || !got[1].Allowed || got[1].Remaining != 9 {
		t.Fatalf("the fresh key after the hash: %+v %v", got[1], errs[1])
	}
}

// TestTickedBatchesChargeInPlace: a batch of a ticked GCRA policy (lua/ticked.lua) or
// a counted fixed window (lua/counted.lua) reads no key with GET, whether its keys
// have state or not: INCRBY reads and charges each in one command. A key of another
// type fails its own decision with WRONGTYPE (a GET then tells that from a bad
// argument) and keeps its value.
func TestTickedBatchesChargeInPlace(t *testing.T) {
	client := standaloneClient(t)
	store := newBatchingStore(t, client)
	ctx := context.Background()
	for _, p := range []core.Policy{
		core.MustPolicy("ticked-batch", core.GCRA, core.PerMinute(10)),
		core.MustPolicy("counted-batch", core.FixedWindow, core.PerMinute(10)),
	} {
		reqs := usersOf(p, 8)
		flush := func(reqs []core.Request, wantGets int64) ([]core.Result, []error) {
			t.Helper()
			return flushCounting(t, store, client, reqs, wantGets, int64(len(reqs)))
		}
		for remaining := int64(9); remaining >= 8; remaining-- {
			got, errs := flush(reqs, 0)
			for i := range reqs {
				if errs[i] != nil || !got[i].Allowed || got[i].Remaining != remaining {
					t.Fatalf("%s: key %d: %+v %v, want admitted with %d remaining", p.Name(), i, got[i], errs[i], remaining)
				}
				if ttl, err := client.PTTL(ctx, store.Key(p, reqs[i].Key)).Result(); err != nil || ttl <= 0 {
					t.Fatalf("%s: key %d: TTL %v %v, want one", p.Name(), i, ttl, err)
				}
			}
		}

		if err := client.HSet(ctx, store.Key(p, "a-hash"), "field", "value").Err(); err != nil {
			t.Fatal(err)
		}
		mixed := []core.Request{{Policy: p, Key: "a-hash"}, {Policy: p, Key: "fresh"}}
		got, errs := flush(mixed, 1)
		if errs[0] == nil || !strings.Contains(errs[0].Error(), "WRONGTYPE") {
			t.Fatalf("%s: the hash: %+v %v, want WRONGTYPE", p.Name(), got[0], errs[0])
		}
		if typ, err := client.Type(ctx, store.Key(p, "a-hash")).Result(); err != nil || typ != "hash" {
			t.Fatalf("%s: the hash is now a %q (%v)", p.Name(), typ, err)
		}
		if errs[1] != nil || !got[1].Allowed || got[1].Remaining != 9 {
			t.Fatalf("%s: the fresh key after the hash: %+v %v", p.Name(), got[1], errs[1])
		}
	}
}

// usersOf is n requests of p for keys user-0, user-1, ….
func usersOf(p core.Policy, n int) []core.Request {
	reqs := make([]core.Request, n)
	for i := range reqs {
		reqs[i] = core.Request{Policy: p, Key: fmt.Sprint("user-", i)}
	}
	return reqs
}

// flushCounting decides reqs as one batch and checks how many GETs and (unless
// wantIncrbys is negative) INCRBYs the server ran for it.
func flushCounting(t *testing.T, store *redisstore.Store, client *redis.Client, reqs []core.Request, wantGets, wantIncrbys int64) ([]core.Result, []error) {
	t.Helper()
	gets, incrs := getCalls(t, client), commandCalls(t, client, "incrby")
	got, errs := redisstore.FlushBatch(store, context.Background(), reqs)
	if n := getCalls(t, client) - gets; n != wantGets {
		t.Errorf("the batch sent %d GETs, want %d", n, wantGets)
	}
	if n := commandCalls(t, client, "incrby") - incrs; wantIncrbys >= 0 && n != wantIncrbys {
		t.Errorf("the batch sent %d INCRBYs, want %d", n, wantIncrbys)
	}
	return got, errs
}
