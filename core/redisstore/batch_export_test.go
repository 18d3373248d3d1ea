package redisstore

import (
	"context"

	"github.com/go-ratelimit/ratelimit/core"
)

// SendersPerNode is how many batches to one node may be in flight at once.
const SendersPerNode = sendersPerNode

// FlushBatch decides reqs as one batch of a batching store, in order, without waiting
// for them to gather: the tests choose what a batch holds. It returns every
// decision's result and error.
func FlushBatch(s *Store, ctx context.Context, reqs []core.Request) ([]core.Result, []error) {
	results, errs := make([]core.Result, len(reqs)), make([]error, len(reqs))
	now, err := s.now()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return results, errs
	}
	calls := make([]*batchCall, len(reqs))
	for i, req := range reqs {
		calls[i] = &batchCall{ctx: ctx, req: req, key: s.stateKey(&req.Policy, req.Key), now: now, done: make(chan struct{}, 1)}
		calls[i].state.Store(callSent)
	}
	s.batch.flush(calls)
	for i, c := range calls {
		<-c.done
		results[i], errs[i] = c.result, c.err
	}
	return results, errs
}

// PendingCalls is how many decisions wait in a standalone batching store's queue,
// not yet taken into a batch.
func PendingCalls(s *Store) int {
	q := s.batch.single.Load()
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}
