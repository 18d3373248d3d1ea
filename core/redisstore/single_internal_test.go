package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestSingleScriptArguments: each algorithm's single-decision script (lua/single.lua
// with its policy and the store's margin written in) charges a well-formed request,
// replying with the string parseSingle reads, and answers malformed arguments with its
// own RATELIMIT error, writing nothing.
func TestSingleScriptArguments(t *testing.T) {
	server := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr()})
	t.Cleanup(func() { client.Close() })
	for _, alg := range core.Algorithms() {
		var p core.Policy
		if alg == core.Concurrency {
			p = core.MustConcurrencyPolicy("single", 5, time.Second)
		} else {
			p = core.MustPolicy("single", alg, core.PerSecond(5))
		}
		source := singleSource(&p, 1000)
		if strings.Contains(source, policyMark) {
			t.Fatalf("%s: the policy was not written in", alg)
		}
		well := []any{"1767225600000", 1}
		malformed := [][]any{
			{"1767225600000", 6},       // cost above the capacity
			{"1767225600000", 0},       // cost below one
			{"1767225600000", "nan"},   // cost not a number
			{"1767225600000", "1.5"},   // cost not whole
			{"-5", 1},                  // now before the epoch
			{"1767225600000"},          // a missing cost
			{"1767225600000", 1, 0, 0}, // arguments too many for any algorithm
			{"1767225600000", "1 0"},   // two numbers in one argument
			{"redis!", 1},              // now neither a number nor "redis"
		}
		if alg == core.Concurrency {
			well = append(well, "7")
			for i := range malformed {
				malformed[i] = append(malformed[i], "7")
			}
			malformed = append(malformed,
				[]any{"1767225600000", 1},                          // a missing lease
				[]any{"1767225600000", 1, "123456789012345678901"}, // a lease id too long
				[]any{"1767225600000", 1, "x7"},                    // a lease id not a number
			)
		} else {
			malformed = append(malformed, []any{"1767225600000", 1, "7"}) // a lease for an algorithm without leases
		}
		for _, argv := range malformed {
			server.FlushAll()
			args := append([]any{"eval", source, 1, "k"}, argv...)
			err := client.Do(context.Background(), args...).Err()
			if err == nil || !strings.HasPrefix(err.Error(), "RATELIMIT") {
				t.Fatalf("%s %v: error %v, want the script's own RATELIMIT error", alg, argv, err)
			}
			if keys := server.Keys(); len(keys) != 0 {
				t.Fatalf("%s %v: rejected, but wrote %v", alg, argv, keys)
			}
		}
		server.FlushAll()
		args := append([]any{"eval", source, 1, "k"}, well...)
		reply, err := client.Do(context.Background(), args...).Text()
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		req := core.Request{Policy: p, Key: "k", Lease: 7}
		var result core.Result
		remaining := int64(4)
		if alg == core.LeakyBucket {
			remaining = 5 // the queue's free slots, the one now taken leaving at once
		}
		if err := parseSingle(reply, &req, &result); err != nil || !result.Allowed || result.Remaining != remaining {
			t.Fatalf("%s: reply %q read as %+v, %v; want an admission with %d remaining", alg, reply, result, err, remaining)
		}
		if len(server.Keys()) != 1 {
			t.Fatalf("%s: an admitted charge wrote %v", alg, server.Keys())
		}
		if ttl := server.TTL("k"); ttl <= 1000*time.Millisecond {
			t.Fatalf("%s: TTL %v, want the state's recovery plus the 1s margin written in", alg, ttl)
		}
	}
}

// TestParseSingle: parseSingle reads exactly six integers separated by single spaces
// that fillResult accepts, and nothing else.
func TestParseSingle(t *testing.T) {
	p := core.MustPolicy("p", core.GCRA, core.PerSecond(5))
	req := core.Request{Policy: p, Key: "k"}
	var result core.Result
	if err := parseSingle("1767225600000 1 4 0 200 0", &req, &result); err != nil {
		t.Fatal(err)
	}
	want := core.Result{Policy: "p", Allowed: true, Limit: 5, Remaining: 4, ResetAfter: 200 * time.Millisecond, DecidedAt: time.UnixMilli(1767225600000)}
	if result != want {
		t.Fatalf("read %+v, want %+v", result, want)
	}
	for _, reply := range []string{
		"", "1767225600000", "1767225600000 1 4 0 200", "1767225600000 1 4 0 200 0 0",
		"1767225600000 1 4 0 200 0 ", " 1767225600000 1 4 0 200 0", "1767225600000  1 4 0 200 0",
		"1767225600000 1 4 0 200 x", "1767225600000 1 4 0 2e2 0", "1767225600000 2 4 0 200 0",
		"-1 1 4 0 200 0", "1767225600000 1 4 5 200 0", "1767225600000 0 4 0 -200 0",
		"9007199254740992 1 4 0 200 0", "1767225600000 1 99999999999999999999 0 200 0",
		"1767225600000 1 4 0 200 0\x00",
	} {
		if err := parseSingle(reply, &req, &result); err == nil {
			t.Errorf("%q: read as %+v, want an error", reply, result)
		}
	}
}

// TestSingleDecisionBeyondTheScriptCache: once a store holds maxCachedPolicies
// single-decision scripts, a new policy's single decision runs the stack script,
// alone and in a batch of one, and reads its reply as the single script's would be.
func TestSingleDecisionBeyondTheScriptCache(t *testing.T) {
	server := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr()})
	t.Cleanup(func() { client.Close() })
	for _, options := range [][]Option{nil, {WithBatching(DefaultBatchWindow, DefaultMaxBatch)}} {
		server.FlushAll()
		store, err := New(client, options...)
		if err != nil {
			t.Fatal(err)
		}
		store.scripts.singles.size.Store(maxCachedPolicies)
		p := core.MustPolicy("uncached", core.GCRA, core.PerSecond(5))
		req := core.Request{Policy: p, Key: "k"}
		if store.scripts.singles.get(&p) != nil {
			t.Fatal("a full cache took a new policy's script")
		}
		for want := int64(4); want >= 3; want-- {
			var res core.Result
			if store.batch == nil {
				res, err = store.Decide(context.Background(), req)
			} else {
				results, errs := FlushBatch(store, context.Background(), []core.Request{req})
				res, err = results[0], errs[0]
			}
			if err != nil || !res.Allowed || res.Remaining != want || res.Policy != "uncached" {
				t.Fatalf("batching %v: got %+v, %v; want an admission with %d remaining", store.batch != nil, res, err, want)
			}
		}
		store.Close()
	}
}
