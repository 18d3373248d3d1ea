package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// TestOneRoundTripPerDecision counts, on the client (a hook) and on the server (INFO
// commandstats), what decisions send: one EVALSHA per decision and per stack, and
// nothing else; after SCRIPT FLUSH, one EVAL more.
func TestOneRoundTripPerDecision(t *testing.T) {
	client := standaloneClient(t)
	counter := &commandCounter{}
	client.AddHook(counter)
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	api := core.MustPolicy("roundtrip-api", core.TokenBucket, core.PerSecond(100))
	stack := []core.Policy{
		core.MustPolicy("roundtrip-account", core.SlidingLog, core.PerMinute(5)),
		core.MustPolicy("roundtrip-ip", core.TokenBucket, core.PerMinute(20)),
		core.MustPolicy("roundtrip-subnet", core.FixedWindow, core.PerMinute(100)),
	}
	decideAll := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := store.Decide(ctx, core.Request{Policy: api, Key: fmt.Sprint("user", i%7)}); err != nil {
				t.Fatal(err)
			}
			reqs := []core.Request{{Policy: stack[0], Key: fmt.Sprint("user", i)}, {Policy: stack[1], Key: "203.0.113.9"}, {Policy: stack[2], Key: "203.0.113"}}
			if _, err := store.DecideStack(ctx, reqs, make([]core.Result, 3)); err != nil {
				t.Fatal(err)
			}
		}
	}
	decideAll(1) // loads the scripts
	if err := client.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	counter.reset()
	decideAll(50)
	if got := counter.scripts(); got != 100 {
		t.Fatalf("50 decisions and 50 stacks sent %d commands, want 100 EVALSHA", -got)
	}
	if stats := scriptCalls(t, client.Info(ctx, "commandstats").Val()); stats["evalsha"] != 100 || stats["eval"] != 0 {
		t.Fatalf("the server ran %v, want 100 EVALSHA", stats)
	}
	if err := client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	counter.reset()
	decideAll(1)
	if got := counter.scripts(); got != 4 {
		t.Fatalf("after SCRIPT FLUSH a decision and a stack sent %d script calls, want 4 (EVALSHA, EVAL each)", got)
	}
}

// scriptCalls reads the calls of EVAL and EVALSHA from INFO commandstats.
func scriptCalls(t *testing.T, info string) map[string]int64 {
	t.Helper()
	calls := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_eval" && name != "cmdstat_evalsha") {
			continue
		}
		for _, field := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("commandstats %q: %v", line, err)
				}
				calls[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return calls
}
