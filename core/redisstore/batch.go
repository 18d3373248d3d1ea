package redisstore

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// sendersPerNode is how many batches to one node may be in flight at once: while
// the server decides one and the next waits on the wire, the third gathers, so the
// server never waits for the client between batches. Three rather than two gave one
// hot key 3.42–3.57× redis_rate against 3.17–3.41× (per-user keys 2.87–3.15× against
// 2.95–3.02×) in three alternating runs: docs/benchmarks.md#batched.
const sendersPerNode = 3

// yieldBelow is the shortest gathering wait a sender sleeps on a timer; it spends a
// shorter one yielding its processor to the goroutines it waits for. A timer of a few
// microseconds fires tens of them late whenever the process has nothing else to run,
// because Go's poller then sleeps until a reply or a whole millisecond: measured 51 µs
// late on average for waits of at most 20 µs, while the server sat idle. Yielding took
// per-user batching from 2.50–2.68× to 2.87–3.08× redis_rate, one hot key from
// 2.82–3.01× to 3.28–3.36×, with less CPU in all (its batches are larger):
// docs/benchmarks.md#batched.
const yieldBelow = 100 * time.Microsecond

// The states of a batchCall.
const (
	callQueued    = iota // waiting in a queue
	callSent             // taken into a batch: it will be answered
	callAbandoned        // its caller left before it was sent: it never will be
)

// batchCall is one Decide waiting for its batch.
type batchCall struct {
	ctx    context.Context
	req    core.Request
	key    string
	now    int64
	queued time.Time // when it joined the queue (only with a window)
	state  atomic.Int32

	result core.Result
	err    error
	done   chan struct{} // receives once the result is set
}

// batcher coalesces the decisions of Store.Decide: per Redis node a queue, served by
// sendersPerNode goroutines that each take what is waiting, up to maxBatch, and send it
// as one pipeline (see batchQueue.serve).
type batcher struct {
	store    *Store
	pipeline func() redis.Pipeliner
	window   time.Duration
	maxBatch int

	calls sync.Pool // of *batchCall, answered and reset

	single atomic.Pointer[batchQueue] // the queue of a standalone server or a Ring
	nodes  sync.Map                   // *redis.Client (a Cluster master) -> *batchQueue

	mu      sync.Mutex // guards closed and the creation of queues
	closed  bool
	stop    chan struct{} // closed by close
	senders sync.WaitGroup
}

func newBatcher(s *Store, client redis.UniversalClient, window time.Duration, maxBatch int) *batcher {
	return &batcher{store: s, pipeline: client.Pipeline, window: window, maxBatch: maxBatch, stop: make(chan struct{})}
}

// decide queues one decision and waits for its answer or for ctx. A caller that leaves
// before its decision is sent leaves nothing behind: the decision is never sent.
func (b *batcher) decide(ctx context.Context, req core.Request, key string, now int64) (core.Result, error) {
	q, err := b.queueFor(ctx, key)
	if err != nil {
		return core.Result{}, err
	}
	if q == nil { // no route to a node now: decide alone, which reports why
		return b.store.decideAlone(ctx, req, key, now)
	}
	if q.claimIdle() {
		// Nothing in flight and nothing waiting: a batch would hold this decision
		// alone, so it goes out from this goroutine, as one unbatched call. While it
		// is in flight it counts as a batch: arrivals gather behind it.
		defer q.release()
		return b.store.decideAlone(ctx, req, key, now)
	}
	c, _ := b.calls.Get().(*batchCall)
	if c == nil {
		c = &batchCall{done: make(chan struct{}, 1)}
	}
	c.ctx, c.req, c.key, c.now = ctx, req, key, now
	c.state.Store(callQueued)
	if err := q.enqueue(c); err != nil {
		return core.Result{}, err
	}
	select {
	case <-c.done:
		return b.recycle(c)
	case <-ctx.Done():
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return core.Result{}, b.store.failed(ctx, []core.Request{req}, ctx.Err())
		}
		select { // sent: its answer may be here already
		case <-c.done:
			return b.recycle(c)
		default: // the sender still holds c: it is not recycled
			return core.Result{}, b.store.failed(ctx, []core.Request{req}, ctx.Err())
		}
	}
}

// recycle returns an answered call's result and puts the call back in the pool: its
// sender has let go of it when it answered.
func (b *batcher) recycle(c *batchCall) (core.Result, error) {
	result, err := c.result, c.err
	done := c.done
	*c = batchCall{done: done}
	b.calls.Put(c)
	return result, err
}

// queueFor is the queue of the node that holds key, created with its senders on first
// use; nil when the Cluster cannot name that node now.
func (b *batcher) queueFor(ctx context.Context, key string) (*batchQueue, error) {
	cluster := b.store.cluster // one queue per master on a Cluster
	if cluster == nil {
		if q := b.single.Load(); q != nil {
			return q, nil
		}
		return b.newQueue(nil)
	}
	node, err := cluster.MasterForKey(ctx, key)
	if err != nil {
		return nil, nil
	}
	if q, ok := b.nodes.Load(node); ok {
		return q.(*batchQueue), nil
	}
	return b.newQueue(node)
}

// newQueue returns the queue of node (nil: the only queue), creating it and starting
// its senders unless another caller did first.
func (b *batcher) newQueue(node *redis.Client) (*batchQueue, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if q := b.single.Load(); node == nil && q != nil {
		return q, nil
	}
	if node != nil {
		if q, ok := b.nodes.Load(node); ok {
			return q.(*batchQueue), nil
		}
	}
	q := &batchQueue{b: b, work: make(chan struct{}, 1), full: make(chan struct{}, 1)}
	if node == nil {
		b.single.Store(q)
	} else {
		b.nodes.Store(node, q)
	}
	b.senders.Add(sendersPerNode)
	for i := 0; i < sendersPerNode; i++ {
		go q.serve()
	}
	return q, nil
}

// close stops the senders after the batches in flight and fails the decisions still
// queued with ErrClosed. It returns when every sender has returned.
func (b *batcher) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.stop)
	}
	b.mu.Unlock()
	b.senders.Wait()
}

// batchQueue holds the decisions bound for one node.
type batchQueue struct {
	b       *batcher
	mu      sync.Mutex
	pending []*batchCall
	sending int  // batches in flight
	closed  bool // set by the last sender to leave
	work    chan struct{}
	full    chan struct{}
}

// claimIdle reports whether the queue is idle (open, nothing in flight, nothing
// waiting), and if so counts the caller's own call as a batch in flight until
// release.
func (q *batchQueue) claimIdle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.sending > 0 || len(q.pending) > 0 {
		return false
	}
	q.sending++
	return true
}

// release ends a call that claimIdle counted as in flight.
func (q *batchQueue) release() {
	q.mu.Lock()
	q.sending--
	q.mu.Unlock()
}

func (q *batchQueue) enqueue(c *batchCall) error {
	if q.b.window > 0 {
		c.queued = time.Now()
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.pending = append(q.pending, c)
	n := len(q.pending)
	q.mu.Unlock()
	if n == 1 {
		signal(q.work)
	}
	if n == q.b.maxBatch {
		signal(q.full)
	}
	return nil
}

// signal wakes a goroutine waiting on ch, or leaves a token for the next to wait.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// serve is one sender of the queue. It sends what is waiting at once when no other
// batch is in flight, so a lone decision waits for nothing. While another is in
// flight it gathers until maxBatch wait or the oldest has waited the window, then
// sends (with a zero window, at once: the batch is what gathered meanwhile).
func (q *batchQueue) serve() {
	defer q.b.senders.Done()
	var timer *time.Timer
	for {
		q.mu.Lock()
		select {
		case <-q.b.stop:
			q.shutDown()
			q.mu.Unlock()
			return
		default:
		}
		if len(q.pending) == 0 {
			q.mu.Unlock()
			select {
			case <-q.work:
			case <-q.b.stop:
			}
			continue
		}
		if wait := q.gatherFor(); wait > 0 {
			q.mu.Unlock()
			if wait < yieldBelow {
				runtime.Gosched()
				continue
			}
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-q.full:
			case <-q.b.stop:
			}
			timer.Stop()
			continue
		}
		batch := q.take()
		if len(q.pending) > 0 {
			signal(q.work) // leftovers: wake the other sender
		}
		if len(batch) == 0 {
			q.mu.Unlock()
			continue
		}
		q.sending++
		q.mu.Unlock()
		q.b.flush(batch)
		q.mu.Lock()
		q.sending--
		q.mu.Unlock()
	}
}

// gatherFor is how long to wait for more decisions before sending: zero without a
// window, with nothing else in flight, or with a full batch waiting. Requires q.mu.
func (q *batchQueue) gatherFor() time.Duration {
	if q.b.window <= 0 || q.sending == 0 || len(q.pending) >= q.b.maxBatch {
		return 0
	}
	return q.b.window - time.Since(q.pending[0].queued)
}

// take removes up to maxBatch decisions from the queue, skipping those whose callers
// left, and marks them sent. Requires q.mu.
func (q *batchQueue) take() []*batchCall {
	batch := make([]*batchCall, 0, min(len(q.pending), q.b.maxBatch))
	i := 0
	for ; i < len(q.pending) && len(batch) < q.b.maxBatch; i++ {
		if c := q.pending[i]; c.state.CompareAndSwap(callQueued, callSent) {
			batch = append(batch, c)
		}
	}
	rest := copy(q.pending, q.pending[i:])
	clear(q.pending[rest:])
	q.pending = q.pending[:rest]
	return batch
}

// shutDown fails what is queued with ErrClosed and refuses new decisions. Requires q.mu.
func (q *batchQueue) shutDown() {
	q.closed = true
	for _, c := range q.pending {
		if c.state.CompareAndSwap(callQueued, callSent) {
			c.answer(core.Result{}, ErrClosed)
		}
	}
	clear(q.pending)
	q.pending = q.pending[:0]
}

func (c *batchCall) answer(result core.Result, err error) {
	c.result, c.err = result, err
	c.done <- struct{}{}
}
