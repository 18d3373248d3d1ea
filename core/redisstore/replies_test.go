package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// checkFailure asserts that a decision failed with an error that wraps want and names
// the policy, and that it admitted nothing.
func checkFailure(t *testing.T, res core.Result, err error, want error, policy string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; result %+v", res)
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %q does not wrap %q", err, want)
	}
	if !strings.Contains(err.Error(), `"`+policy+`"`) {
		t.Fatalf("error %q does not name policy %q", err, policy)
	}
	if res.Allowed {
		t.Fatalf("a failed decision admitted: %+v", res)
	}
}

// TestWrongTypeAndForeignState puts keys of another type, and values the scripts did
// not write, where the store keeps state: every algorithm reports an error naming the
// policy, and writes nothing.
func TestWrongTypeAndForeignState(t *testing.T) {
	for name, client := range testClients(false) {
		t.Run(name, func(t *testing.T) {
			client := client(t)
			store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, p := range ttlPolicies() {
				for _, c := range []struct {
					name  string
					plant func(key string) error
				}{
					{"WrongType", func(key string) error { return client.RPush(ctx, key, "1", "2").Err() }},
					{"ForeignValue", func(key string) error { return client.Set(ctx, key, "garbage", 0).Err() }},
					{"ForeignEntries", func(key string) error { return client.Set(ctx, key, "1 2,,3 4 5", 0).Err() }},
				} {
					key := c.name + "-victim"
					redisKey := store.Key(p, key)
					if err := c.plant(redisKey); err != nil {
						t.Fatal(err)
					}
					res, err := store.Decide(ctx, core.Request{Policy: p, Key: key, Lease: 1})
					checkFailure(t, res, err, redisstore.ErrUnexpectedReply, p.Name())
					if c.name == "WrongType" && !strings.Contains(err.Error(), "WRONGTYPE") {
						t.Fatalf("%s: error %q does not say WRONGTYPE", p.Name(), err)
					}
					// A stack with the broken key fails whole, and charges no other policy.
					other := core.MustPolicy("wrongtype-other", core.FixedWindow, core.PerMinute(1))
					reqs := []core.Request{{Policy: other, Key: key}, {Policy: p, Key: key, Lease: 2}}
					allowed, err := store.DecideStack(ctx, reqs, make([]core.Result, 2))
					checkFailure(t, core.Result{Allowed: allowed}, err, redisstore.ErrUnexpectedReply, p.Name())
					if n, _ := client.Exists(ctx, store.Key(other, key)).Result(); n != 0 {
						t.Fatalf("%s %s: the failed stack wrote the other policy's state", p.Name(), c.name)
					}
					if p.Algorithm() == core.Concurrency {
						err := store.Release(ctx, core.Request{Policy: p, Key: key}, 1)
						checkFailure(t, core.Result{}, err, redisstore.ErrUnexpectedReply, p.Name())
					}
					client.Del(ctx, redisKey)
				}
			}
		})
	}
}

// TestServerNotReady: LOADING (a restarting server) and READONLY (a replica after a
// failover) fail the decision with core.ErrStoreUnavailable, naming the policy.
func TestServerNotReady(t *testing.T) {
	server := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr(), MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("not-ready", core.TokenBucket, core.PerSecond(5))
	for _, reply := range []string{
		"LOADING Redis is loading the dataset in memory",
		"READONLY You can't write against a read only replica.",
		"CLUSTERDOWN The cluster is down",
	} {
		server.SetError(reply)
		res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
		checkFailure(t, res, err, core.ErrStoreUnavailable, p.Name())
		allowed, err := store.DecideStack(context.Background(), []core.Request{{Policy: p, Key: "k"}}, make([]core.Result, 1))
		checkFailure(t, core.Result{Allowed: allowed}, err, core.ErrStoreUnavailable, p.Name())
	}
	server.SetError("")
	if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"}); err != nil {
		t.Fatalf("after the server recovered: %v", err)
	}
}

// TestUnreachableServer: a closed server is core.ErrStoreUnavailable, and a cancelled
// context is reported as such, not as a store failure.
func TestUnreachableServer(t *testing.T) {
	server := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr(), MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("unreachable", core.GCRA, core.PerSecond(5))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := store.Decide(ctx, core.Request{Policy: p, Key: "k"})
	checkFailure(t, res, err, context.Canceled, p.Name())
	if errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("a cancelled context was reported as a store failure: %v", err)
	}
	server.Close()
	res, err = store.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
	checkFailure(t, res, err, core.ErrStoreUnavailable, p.Name())
}

// TestCrossSlotOnCluster: a client the store cannot recognise as a Cluster client (here
// a wrapper) makes the store send a stack's keys in one call; the Cluster refuses with
// CROSSSLOT, which is an error naming the policies, never an admission.
func TestCrossSlotOnCluster(t *testing.T) {
	client := wrappedClient{clusterClient(t)}
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()))
	if err != nil {
		t.Fatal(err)
	}
	a := core.MustPolicy("crossslot-a", core.TokenBucket, core.PerSecond(5))
	b := core.MustPolicy("crossslot-b", core.TokenBucket, core.PerSecond(5))
	results := make([]core.Result, 2)
	allowed, err := store.DecideStack(context.Background(), []core.Request{{Policy: a, Key: "x"}, {Policy: b, Key: "y"}}, results)
	checkFailure(t, core.Result{Allowed: allowed}, err, redisstore.ErrUnexpectedReply, a.Name())
	if !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("error %q does not say CROSSSLOT", err)
	}
}

// wrappedClient hides a ClusterClient's type, as an instrumentation wrapper would.
type wrappedClient struct{ *redis.ClusterClient }

// TestCrossSlotReply simulates the CROSSSLOT reply on any server with a hook.
func TestCrossSlotReply(t *testing.T) {
	client := newMiniredisClient(t)
	client.AddHook(replyHook{err: errors.New("CROSSSLOT Keys in request don't hash to the same slot")})
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("crossslot", core.SlidingWindow, core.PerSecond(5))
	res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
	checkFailure(t, res, err, redisstore.ErrUnexpectedReply, p.Name())
}

// TestMalformedReplies feeds replies of the wrong shape to the store, to a single
// decision (whose script replies with a string) and to a stack (integers): each one is
// an error naming the policy, never an admission, never a panic.
func TestMalformedReplies(t *testing.T) {
	replies := map[string]any{
		"Empty":                 []int64{},
		"Short":                 []int64{1767225600000, 1, 1, 4, 0},
		"Long":                  []int64{1767225600000, 1, 1, 4, 0, 200, 0, 7},
		"FieldsAlone":           []int64{1, 4, 0, 200, 0},
		"AllowedIsTwo":          []int64{1767225600000, 1, 2, 4, 0, 200, 0},
		"NegativeRetry":         []int64{1767225600000, 0, 0, 4, -5, 200, 0},
		"NegativeReset":         []int64{1767225600000, 1, 1, 4, 0, -1, 0},
		"RemainingAboveLimit":   []int64{1767225600000, 1, 1, 99, 0, 200, 0},
		"AdmittedWithRetry":     []int64{1767225600000, 1, 1, 4, 10, 200, 0},
		"StackFlagDisagrees":    []int64{1767225600000, 1, 0, 4, 10, 200, 0},
		"NegativeInstant":       []int64{-1, 1, 1, 4, 0, 200, 0},
		"RetryBeyondExactRange": []int64{1767225600000, 0, 0, 4, 1 << 60, 200, 0},
		"ArrayOfStrings":        []any{"1", "4", "200"},
		"Nil":                   nil,
		"Status":                "OK",
		"Integer":               int64(4<<27 + 200),
		"StringShort":           "1767225600000 1 4 0 200",
		"StringLong":            "1767225600000 1 4 0 200 0 7",
		"StringAllowedIsTwo":    "1767225600000 2 4 0 200 0",
		"StringNegativeRetry":   "1767225600000 0 4 -5 200 0",
		"StringAdmittedRetry":   "1767225600000 1 4 10 200 0",
		"StringAboveLimit":      "1767225600000 1 99 0 200 0",
		"StringNegativeInstant": "-1 1 4 0 200 0",
		"StringFloat":           "1767225600000 1 4 0 2e2 0",
		"StringDoubleSpace":     "1767225600000 1  4 0 200 0",
		"StringTrailingSpace":   "1767225600000 1 4 0 200 0 ",
		"StringOverflow":        "1767225600000 1 4 0 99999999999999999999 0",
		"StringEmpty":           "",
	}
	for _, p := range []core.Policy{
		core.MustPolicy("malformed", core.TokenBucket, core.PerSecond(5)),
		core.MustPolicy("malformed-log", core.SlidingLog, core.PerSecond(5)),
	} {
		for name, reply := range replies {
			t.Run(p.Name()+"/"+name, func(t *testing.T) {
				client := newMiniredisClient(t)
				client.AddHook(replyHook{reply: reply})
				store, err := redisstore.New(client)
				if err != nil {
					t.Fatal(err)
				}
				res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
				checkFailure(t, res, err, redisstore.ErrUnexpectedReply, p.Name())
				second := core.MustPolicy(p.Name()+"-second", p.Algorithm(), core.PerSecond(5))
				results := make([]core.Result, 2)
				allowed, err := store.DecideStack(context.Background(), []core.Request{{Policy: p, Key: "k"}, {Policy: second, Key: "k"}}, results)
				checkFailure(t, core.Result{Allowed: allowed}, err, redisstore.ErrUnexpectedReply, p.Name())
			})
		}
	}
}

// TestWellFormedReply feeds a well-formed admission to the store through the hook that
// TestMalformedReplies uses, as a single decision's string and as a stack's integers:
// each reads as that admission.
func TestWellFormedReply(t *testing.T) {
	p := core.MustPolicy("well-formed", core.TokenBucket, core.PerSecond(5))
	single, err := redisstore.New(hookedClient(t, "1767225600000 1 4 0 200 0"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := single.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
	if err != nil || !res.Allowed || res.Remaining != 4 || res.ResetAfter != 200*time.Millisecond || res.Limit != 5 {
		t.Fatalf("single: got %+v, %v; want an admission with 4 remaining, reset in 200ms", res, err)
	}
	stack, err := redisstore.New(hookedClient(t, []int64{1767225600000, 1, 1, 4, 0, 200, 0, 1, 3, 0, 400, 0}))
	if err != nil {
		t.Fatal(err)
	}
	second := core.MustPolicy("well-formed-second", core.TokenBucket, core.PerSecond(5))
	results := make([]core.Result, 2)
	allowed, err := stack.DecideStack(context.Background(), []core.Request{{Policy: p, Key: "k"}, {Policy: second, Key: "k"}}, results)
	if err != nil || !allowed || results[0].Remaining != 4 || results[1].Remaining != 3 || results[1].ResetAfter != 400*time.Millisecond {
		t.Fatalf("stack: got %v %+v, %v; want admissions with 4 and 3 remaining", allowed, results, err)
	}
}

// hookedClient is a client on a miniredis whose script calls all answer reply.
func hookedClient(t *testing.T, reply any) *redis.Client {
	client := newMiniredisClient(t)
	client.AddHook(replyHook{reply: reply})
	return client
}

// replyHook answers every script call itself: with err, or with reply, as a server
// would: integers ([]int64) become an array of integers, a string a bulk string.
type replyHook struct {
	err   error
	reply any
}

func (h replyHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h replyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		if h.err != nil {
			cmd.SetErr(h.err)
			return h.err
		}
		ints, isInts := h.reply.([]int64)
		text, isText := h.reply.(string)
		cannotParse := func(as string) error { // what go-redis answers for a reply of another type
			err := fmt.Errorf("redis: can't parse %T as %s", h.reply, as)
			cmd.SetErr(err)
			return err
		}
		switch c := cmd.(type) {
		case *redis.StringCmd:
			if !isText {
				return cannotParse("a string")
			}
			c.SetVal(text)
		case *redis.IntSliceCmd:
			if !isInts {
				return cannotParse("an array of integers")
			}
			c.SetVal(ints)
		case *redis.Cmd:
			if !isInts {
				c.SetVal(h.reply)
				return nil
			}
			array := make([]any, len(ints))
			for i, v := range ints {
				array[i] = v
			}
			c.SetVal(array)
		}
		return nil
	}
}

func (h replyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
