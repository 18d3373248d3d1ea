package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// FuzzScriptsMatchStep holds every algorithm's script to core's pure transition: a
// fuzzed policy and trace (instants that stay, step on, jump or go back; costs; two
// keys) are decided by a store alone (the single-decision script), by a batching store in
// batches of the steps that share an instant (the batch script), and by
// transition.StepRequest. Every decision must be identical.
func FuzzScriptsMatchStep(f *testing.F) {
	f.Add(uint8(0), uint32(10), uint32(1000), uint32(0), []byte{0, 0, 0, 0, 0, 1, 5, 3, 0, 200, 1, 1})
	f.Add(uint8(1), uint32(2500), uint32(1000), uint32(7), []byte{0, 2, 0, 1, 0, 1, 130, 9, 0})
	f.Add(uint8(2), uint32(3), uint32(250), uint32(1), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 60, 2, 1})
	f.Add(uint8(3), uint32(7), uint32(3000), uint32(0), []byte{0, 3, 1, 0, 5, 1, 250, 1, 0})
	f.Add(uint8(4), uint32(5), uint32(60000), uint32(0), []byte{0, 1, 0, 30, 1, 0, 255, 2, 1})
	f.Add(uint8(5), uint32(4), uint32(1000), uint32(0), []byte{0, 1, 0, 0, 1, 0, 100, 1, 0})
	f.Add(uint8(6), uint32(2), uint32(500), uint32(0), []byte{0, 0, 0, 0, 0, 0, 90, 0, 0})
	stores := newFuzzStores(f)
	ctx := context.Background()
	algorithms := core.Algorithms()
	f.Fuzz(func(t *testing.T, algorithm uint8, limit, period, burst uint32, trace []byte) {
		stores.server.FlushAll()
		alg := algorithms[int(algorithm)%len(algorithms)]
		rate := core.Rate{Limit: 1 + int64(limit%5000), Period: time.Duration(1+period%86_400_000) * time.Millisecond}
		var options []core.Option
		if burst%4 != 0 && alg != core.Concurrency {
			options = append(options, core.WithBurst(1+int64(burst%(2*uint32(rate.Limit)+2))))
		}
		var p core.Policy
		var err error
		if alg == core.Concurrency {
			p, err = core.NewConcurrencyPolicy("fuzz", rate.Limit, rate.Period, options...)
		} else {
			p, err = core.NewPolicy("fuzz", alg, rate, options...)
		}
		if err != nil {
			return
		}
		states := map[string]transition.State{}
		now := int64(1_767_225_600_000)
		var batch []core.Request
		var want []core.Result
		flush := func() {
			stores.checkBatch(t, ctx, batch, want, p.String())
			batch, want = batch[:0], want[:0]
		}
		for i := 0; i+2 < len(trace) && i < 3*64; i += 3 {
			if trace[i] != 0 {
				flush()
				now = advance(now, trace[i], p.PeriodMillis())
			}
			req := core.Request{Policy: p, Key: []string{"a", "b"}[trace[i+2]%2], Cost: int64(trace[i+1]) % (p.Capacity() + 1),
				Lease: uint64(i + 1)}
			next, res := transition.StepRequest(states[req.Key], &req, now)
			if res.Allowed {
				states[req.Key] = next
			}
			stores.ms.Store(now)
			got, err := stores.alone.Decide(ctx, req)
			if err != nil || got != res {
				t.Fatalf("%v, step %d at %d (%+v): got %+v %v, want %+v", p, i/3, now, req, got, err, res)
			}
			batch, want = append(batch, req), append(want, res)
		}
		flush()
	})
}

// fuzzStores is what the fuzz tests that hold the scripts to the transitions decide
// on: a miniredis, and on it a store that decides alone and one that batches, each
// under its own prefix, both on the clock ms (Unix ms).
type fuzzStores struct {
	server         *miniredis.Miniredis
	ms             *atomic.Int64
	alone, batched *redisstore.Store
}

func newFuzzStores(f *testing.F) *fuzzStores {
	server, client := redisstore.NewFuzzRedis(f)
	s := &fuzzStores{server: server, ms: new(atomic.Int64)}
	clock := redisstore.WithClock(func() time.Time { return time.UnixMilli(s.ms.Load()) })
	var err error
	if s.alone, err = redisstore.New(client, redisstore.WithPrefix("alone:"), clock); err != nil {
		f.Fatal(err)
	}
	if s.batched, err = redisstore.New(client, redisstore.WithPrefix("batched:"), clock, batching); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.batched.Close() })
	return s
}

// checkBatch decides batch as one batch of the batching store, at the clock's instant,
// and fails t unless each decision is the one want holds. policies names what was
// fuzzed.
func (s *fuzzStores) checkBatch(t *testing.T, ctx context.Context, batch []core.Request, want []core.Result, policies string) {
	t.Helper()
	if len(batch) == 0 {
		return
	}
	got, errs := redisstore.FlushBatch(s.batched, ctx, batch)
	for i := range batch {
		if errs[i] != nil || got[i] != want[i] {
			t.Fatalf("%s, batched decision %d of %d at %d (%+v): got %+v %v, want %+v", policies, i+1, len(batch), s.ms.Load(), batch[i], got[i], errs[i], want[i])
		}
	}
}

// advance moves a fuzzed trace's clock from now by step: below 128 on by step², from
// 128 a jump ahead or back by up to three periods (ms).
func advance(now int64, step byte, period int64) int64 {
	if step < 128 {
		return now + int64(step)*int64(step)
	}
	return now + (int64(step)-192)*3*period/64
}
