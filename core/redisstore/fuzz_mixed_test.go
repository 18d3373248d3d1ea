package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// FuzzMixedPoliciesMatchStep holds the scripts to core's pure transitions when two
// policies meet in one script call: a fuzzed pair of policies (any two algorithms,
// rates and bursts) and a trace of single decisions and two-policy stacks on two
// keys, at instants that stay, step on, jump or go back. A store decides each step
// alone (single-decision scripts, and the stack script for stacks); a batching store
// decides the single decisions that share an instant as one batch, where the two
// policies' runs share a script call when their algorithm is the same, and the stacks
// alone. Both must match transition.StepRequest and transition.StepStack exactly.
// FuzzScriptsMatchStep covers one policy at a time; a value one policy's decision
// leaves behind for the next (the kept instant or TTL text) is only exercised here.
func FuzzMixedPoliciesMatchStep(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint32(3), uint32(1), uint32(1000), uint32(1000), []byte{0, 1, 0, 0, 1, 1, 0, 1, 2, 9, 1, 3, 0, 1, 0})
	f.Add(uint8(0), uint8(1), uint32(10), uint32(4), uint32(1000), uint32(250), []byte{0, 1, 0, 0, 2, 1, 0, 2, 2, 60, 1, 0, 0, 1, 3})
	f.Add(uint8(2), uint8(3), uint32(5), uint32(7), uint32(500), uint32(1000), []byte{0, 1, 2, 0, 1, 1, 200, 1, 2, 0, 1, 0})
	f.Add(uint8(4), uint8(5), uint32(2), uint32(3), uint32(60000), uint32(2000), []byte{0, 1, 2, 0, 1, 0, 255, 1, 3, 0, 2, 2})
	f.Add(uint8(6), uint8(1), uint32(2), uint32(5), uint32(800), uint32(1000), []byte{0, 1, 2, 0, 1, 0, 0, 1, 3, 90, 1, 2})
	stores := newFuzzStores(f)
	ctx := context.Background()
	algorithms := core.Algorithms()
	f.Fuzz(func(t *testing.T, alg0, alg1 uint8, limit0, limit1, period0, period1 uint32, trace []byte) {
		stores.server.FlushAll()
		policies := [2]core.Policy{}
		for i, spec := range []struct {
			alg           uint8
			limit, period uint32
		}{{alg0, limit0, period0}, {alg1, limit1, period1}} {
			alg := algorithms[int(spec.alg)%len(algorithms)]
			rate := core.Rate{Limit: 1 + int64(spec.limit%50), Period: time.Duration(1+spec.period%3_600_000) * time.Millisecond}
			name := []string{"first", "second"}[i]
			var err error
			if alg == core.Concurrency {
				policies[i], err = core.NewConcurrencyPolicy(name, rate.Limit, rate.Period)
			} else {
				var options []core.Option
				if spec.limit%3 == 1 {
					options = append(options, core.WithBurst(1+int64(spec.limit/3%(2*uint32(rate.Limit)+2))))
				}
				policies[i], err = core.NewPolicy(name, alg, rate, options...)
			}
			if err != nil {
				return
			}
		}
		states := map[[2]string]transition.State{} // by policy name and key
		now := int64(1_767_225_600_000)
		var batch []core.Request
		var want []core.Result
		flush := func() {
			stores.checkBatch(t, ctx, batch, want, fmt.Sprint(policies))
			batch, want = batch[:0], want[:0]
		}
		for i := 0; i+2 < len(trace) && i < 3*64; i += 3 {
			if trace[i] != 0 { // jumps are by the first policy's period
				flush()
				now = advance(now, trace[i], policies[0].PeriodMillis())
			}
			stores.ms.Store(now)
			op, key := trace[i+1], []string{"a", "b"}[trace[i+2]%2]
			cost := int64(trace[i+2] / 2)
			if op%3 == 2 { // a stack of both policies on key
				flush()
				reqs := []core.Request{
					{Policy: policies[0], Key: key, Cost: cost % (policies[0].Capacity() + 1), Lease: uint64(i + 1)},
					{Policy: policies[1], Key: key, Cost: cost % (policies[1].Capacity() + 1), Lease: uint64(i + 1)},
				}
				names := [2][2]string{{policies[0].Name(), key}, {policies[1].Name(), key}}
				wantResults := make([]core.Result, 2)
				next, wantAllowed := transition.StepStack([]transition.State{states[names[0]], states[names[1]]}, reqs, now, wantResults)
				states[names[0]], states[names[1]] = next[0], next[1]
				for _, store := range []*redisstore.Store{stores.alone, stores.batched} {
					got := make([]core.Result, 2)
					allowed, err := store.DecideStack(ctx, reqs, got)
					if err != nil || allowed != wantAllowed || got[0] != wantResults[0] || got[1] != wantResults[1] {
						t.Fatalf("%v, stack at step %d at %d (%+v): got %v %+v %v, want %v %+v", policies, i/3, now, reqs, allowed, got, err, wantAllowed, wantResults)
					}
				}
				continue
			}
			p := policies[op%3]
			req := core.Request{Policy: p, Key: key, Cost: cost % (p.Capacity() + 1), Lease: uint64(i + 1)}
			name := [2]string{p.Name(), key}
			next, res := transition.StepRequest(states[name], &req, now)
			if res.Allowed {
				states[name] = next
			}
			got, err := stores.alone.Decide(ctx, req)
			if err != nil || got != res {
				t.Fatalf("%v, step %d at %d (%+v): got %+v %v, want %+v", policies, i/3, now, req, got, err, res)
			}
			batch, want = append(batch, req), append(want, res)
		}
		flush()
	})
}
