package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// pipelineGate is a go-redis hook that records when each pipeline or lone command
// leaves and how many commands it holds, and holds the first until release: a batch
// in flight that the test controls (a decision alone leaves as one command).
type pipelineGate struct {
	mu      sync.Mutex
	sent    []gateRecord
	hold    chan struct{} // closed by release
	holding chan struct{} // closed when the first pipeline is held
	once    sync.Once
	all     bool // hold every command until release, not only the first
}

type gateRecord struct {
	at        time.Time
	cmds      int
	args      int  // arguments of the first command
	pipelined bool // a pipeline (a batch), not a lone command
}

func newPipelineGate() *pipelineGate {
	return &pipelineGate{hold: make(chan struct{}), holding: make(chan struct{})}
}

func (g *pipelineGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *pipelineGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := g.pass(ctx, []redis.Cmder{cmd}, false); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}

func (g *pipelineGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := g.pass(ctx, cmds, true); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// pass records cmds and holds the first of them until release, or until ctx ends
// as a server that does not answer would (go-redis then fails the call with ctx's
// error).
func (g *pipelineGate) pass(ctx context.Context, cmds []redis.Cmder, pipelined bool) error {
	g.mu.Lock()
	g.sent = append(g.sent, gateRecord{at: time.Now(), cmds: len(cmds), args: len(cmds[0].Args()), pipelined: pipelined})
	first := len(g.sent) == 1
	all := g.all
	g.mu.Unlock()
	if first {
		close(g.holding)
	}
	if first || all {
		select {
		case <-g.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (g *pipelineGate) release() { g.once.Do(func() { close(g.hold) }) }

func (g *pipelineGate) records() []gateRecord {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]gateRecord(nil), g.sent...)
}

// gatedStore is a batching store on a fresh standalone client whose first pipeline the
// gate holds; one decision is in flight, held, when it returns.
func gatedStore(t *testing.T, window time.Duration, maxBatch int) (*redisstore.Store, *pipelineGate, redis.UniversalClient) {
	t.Helper()
	store, gate, client := gatedStoreIdle(t, window, maxBatch)
	p := core.MustPolicy("gated-first", core.GCRA, core.PerSecond(1000))
	go store.Decide(context.Background(), core.Request{Policy: p, Key: "first"})
	select {
	case <-gate.holding:
	case <-time.After(5 * time.Second):
		t.Fatal("the first decision never left")
	}
	return store, gate, client
}

// gatedStoreIdle is a batching store whose scripts (alone and batched) are loaded and
// whose next pipeline the gate will hold.
func gatedStoreIdle(t *testing.T, window time.Duration, maxBatch int) (*redisstore.Store, *pipelineGate, redis.UniversalClient) {
	t.Helper()
	client := standaloneClient(t)
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()), redisstore.WithBatching(window, maxBatch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := core.MustPolicy("gated-first", core.GCRA, core.PerSecond(1000))
	if _, errs := redisstore.FlushBatch(store, context.Background(), []core.Request{{Policy: p, Key: "warm"}, {Policy: p, Key: "warm"}}); errs[0] != nil {
		t.Fatal(errs[0]) // loads the script's batch form
	}
	if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "warm"}); err != nil { // and the script
		t.Fatal(err)
	}
	gate := newPipelineGate()
	client.AddHook(gate)
	t.Cleanup(gate.release) // before Close, which waits for the held batch
	return store, gate, client
}

// A decision alone waits for no batch: with the longest window, twenty decisions one
// after another each come back long before the window would have passed, and each
// leaves from its caller as one plain command, not as a batch of one.
func TestBatchLoneDecisionWaitsForNoOne(t *testing.T) {
	client := standaloneClient(t)
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()),
		redisstore.WithBatching(redisstore.MaxBatchWindow, redisstore.DefaultMaxBatch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := core.MustPolicy("lone", core.GCRA, core.PerSecond(1000))
	if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "warm"}); err != nil {
		t.Fatal(err) // loads the script
	}
	gate := newPipelineGate()
	gate.release() // records, holds nothing
	client.AddHook(gate)
	took := make([]time.Duration, 20)
	for i := range took {
		start := time.Now()
		if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: fmt.Sprint("user", i)}); err != nil {
			t.Fatal(err)
		}
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	if median := took[len(took)/2]; median >= redisstore.MaxBatchWindow/4 {
		t.Fatalf("lone decisions took %v: they waited for the %v window", took, redisstore.MaxBatchWindow)
	}
	t.Logf("20 lone decisions: median %v, slowest %v", took[len(took)/2], took[len(took)-1])
	for _, r := range gate.records() {
		if r.pipelined {
			t.Fatalf("a lone decision went out as a batch: %+v", r)
		}
	}
}

// While a batch is in flight, a decision waits for the window and no longer, and
// maxBatch waiting decisions leave at once, as one script call.
func TestBatchWindowAndMaxBatch(t *testing.T) {
	t.Run("Window", func(t *testing.T) {
		const window = 5 * time.Millisecond
		store, gate, _ := gatedStore(t, window, 8)
		p := core.MustPolicy("gated", core.GCRA, core.PerSecond(1000))
		start := time.Now()
		if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "second"}); err != nil {
			t.Fatal(err)
		}
		sent := gate.records()
		if len(sent) != 2 {
			t.Fatalf("%d pipelines, want the held one and the second", len(sent))
		}
		waited := sent[1].at.Sub(start)
		t.Logf("the second decision left after %v (window %v)", waited, window)
		if waited < window*9/10 || waited > window+50*time.Millisecond {
			t.Fatalf("the second decision left after %v, want about the %v window", waited, window)
		}
	})
	t.Run("MaxBatch", func(t *testing.T) {
		store, gate, _ := gatedStore(t, redisstore.MaxBatchWindow, 4)
		p := core.MustPolicy("gated", core.GCRA, core.PerSecond(1000))
		start := time.Now()
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: fmt.Sprint("user", i)}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		sent := gate.records()
		if len(sent) != 2 || sent[1].cmds != 1 {
			t.Fatalf("pipelines %+v: want the held one, then one command for the four", sent)
		}
		if waited := sent[1].at.Sub(start); waited >= redisstore.MaxBatchWindow {
			t.Fatalf("the full batch left after %v: it waited for the window", waited)
		}
	})
}

// A caller whose context ends returns at once: before its decision leaves, the
// decision is dropped and never charged; after, the others of its batch are unharmed.
func TestBatchCallerContexts(t *testing.T) {
	// Every sender busy, held by the gate: a lone decision, then one batch per
	// sender (a zero window sends each at once), so that later decisions wait in
	// the queue for as long as the test needs.
	store, gate, client := gatedStoreIdle(t, 0, 64)
	gate.mu.Lock()
	gate.all = true
	gate.mu.Unlock()
	// 10 a minute: a charged key lives 6 s, long enough to be seen by EXISTS on a busy
	// machine (at 1000 a second it expired 2 ms after its decision, and CI saw none).
	p := core.MustPolicy("gated", core.GCRA, core.PerMinute(10))
	for i := range redisstore.SendersPerNode + 1 {
		go store.Decide(context.Background(), core.Request{Policy: p, Key: fmt.Sprint("busy", i)})
		waitUntil(t, "a sender held", func() bool { return len(gate.records()) == i+1 })
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := store.Decide(ctx, core.Request{Policy: p, Key: "leaves"})
		done <- err
	}()
	stays := make(chan error, 1)
	go func() {
		_, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "stays"})
		stays <- err
	}()
	waitUntil(t, "both decisions queued", func() bool { return redisstore.PendingCalls(store) == 2 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the cancelled caller did not return")
	}
	gate.release()
	if err := <-stays; err != nil {
		t.Fatalf("its neighbour failed: %v", err)
	}
	if n, err := client.Exists(context.Background(), store.Key(p, "leaves")).Result(); err != nil || n != 0 {
		t.Fatalf("the dropped decision was charged: EXISTS %d %v", n, err)
	}
	if n, err := client.Exists(context.Background(), store.Key(p, "stays")).Result(); err != nil || n != 1 {
		t.Fatalf("its neighbour was not charged: EXISTS %d %v", n, err)
	}
	// A deadline that ends while the caller's decision is in flight, held (alone, it
	// left as one command from the caller's goroutine).
	store2, _, _ := gatedStoreIdle(t, 0, 64)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	start := time.Now()
	_, err := store2.Decide(ctx2, core.Request{Policy: p, Key: "late"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("a caller past its deadline got %v after %v", err, time.Since(start))
	}
}

// Close stops every goroutine batching started, on a Cluster one queue per master,
// and later decisions fail with ErrClosed.
func TestBatchCloseStopsGoroutines(t *testing.T) {
	client := clusterClient(t)
	p := core.MustPolicy("close", core.GCRA, core.PerSecond(1000))
	warm, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ { // the client's connections and cluster state exist before counting
		if _, err := warm.Decide(context.Background(), core.Request{Policy: p, Key: fmt.Sprint("user", i)}); err != nil {
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()), batching)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: fmt.Sprint("user", g, i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if during := runtime.NumGoroutine(); during < before+3 {
		t.Fatalf("%d goroutines with batching across three masters, %d before: want senders per master", during, before)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waited for the senders; allow the runtime a moment to reap what exited.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		t.Fatalf("%d goroutines after Close, %d before", after, before)
	}
	if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "late"}); !errors.Is(err, redisstore.ErrClosed) {
		t.Fatalf("a decision after Close: %v, want ErrClosed", err)
	}
}

// waitUntil polls cond until it holds, failing the test after 5 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
	}
}
