package httpengine

import (
	"context"
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
)

// decideAll decides reqs, all-or-nothing, into results, for t, the merged
// decision. A store's stack names each policy once: where a policy appears under
// several keys (declared at two levels with different key functions), reqs are
// decided in turns, each a stack of one request per policy. The first turn that
// refuses (or fails) ends the decision: the turns before it are given back
// (uncharge), and the later ones are never asked, so that they charge nothing,
// even on a store that cannot refund; their results say only that they are not
// charged.
func (l *Limiter) decideAll(ctx context.Context, t *Ticket, reqs []core.Request, results []core.Result) (bool, error) {
	turn := make([]int, len(reqs)) // the turn of each request: one per earlier request of its policy
	turns := 1
	for i := range reqs {
		for j := range i {
			if reqs[j].Policy.Name() == reqs[i].Policy.Name() {
				turn[i]++
			}
		}
		turns = max(turns, turn[i]+1)
	}
	if turns == 1 {
		return l.decideStack(ctx, reqs, results)
	}
	asked := make([]core.Request, 0, len(reqs))
	answers := make([]core.Result, len(reqs))
	at := make([]int, 0, len(reqs))
	for k := range turns {
		asked, at = asked[:0], at[:0]
		for i := range reqs {
			if turn[i] == k {
				asked, at = append(asked, reqs[i]), append(at, i)
			}
		}
		allowed, err := l.decideStack(ctx, asked, answers[:len(asked)])
		for m, i := range at {
			results[i] = answers[m]
		}
		if err == nil && allowed {
			continue
		}
		var rc releaseContext
		for i := range reqs {
			switch {
			case turn[i] < k:
				l.uncharge(rc.of(t.r, l.releaseTimeout), t, &reqs[i], &results[i], nil) // charged by this decision alone
			case turn[i] > k:
				results[i] = core.Result{Policy: reqs[i].Policy.Name(), Limit: reqs[i].Policy.Capacity()}
			}
		}
		rc.end()
		return false, err
	}
	return true, nil
}

// decideStack decides reqs, whose policies are distinct, as one stack.
func (l *Limiter) decideStack(ctx context.Context, reqs []core.Request, results []core.Result) (allowed bool, err error) {
	if len(reqs) == 1 {
		results[0], err = l.store.Decide(ctx, reqs[0])
		return results[0].Allowed, err
	}
	if err = core.CheckStack(reqs, results); err != nil {
		return false, fmt.Errorf("httplimit: merged decision: %w", err)
	}
	return l.store.DecideStack(ctx, reqs, results)
}
