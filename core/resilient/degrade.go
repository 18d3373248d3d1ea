package resilient

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// maxDegradedPolicies bounds the cache of degraded policies; beyond it they are
// derived per decision (policies computed per request, from many tenants' plans).
const maxDegradedPolicies = 4096

// degrader derives the policy Local mode enforces from each policy: 1/replicas of it,
// then the user's function. Results are cached by policy ID.
type degrader struct {
	replicas int64
	degrade  func(core.Policy) core.Policy

	mu    sync.RWMutex
	cache map[string]core.Policy
}

func newDegrader(replicas int64, degrade func(core.Policy) core.Policy) *degrader {
	return &degrader{replicas: replicas, degrade: degrade, cache: map[string]core.Policy{}}
}

// policy is the degraded form of p.
func (d *degrader) policy(p core.Policy) (core.Policy, error) {
	if d.replicas == 1 && d.degrade == nil {
		return p, nil
	}
	d.mu.RLock()
	q, ok := d.cache[p.ID()]
	d.mu.RUnlock()
	if ok {
		return q, nil
	}
	q, err := d.derive(p)
	if err != nil {
		return core.Policy{}, err
	}
	d.mu.Lock()
	if len(d.cache) < maxDegradedPolicies {
		d.cache[p.ID()] = q
	}
	d.mu.Unlock()
	return q, nil
}

func (d *degrader) derive(p core.Policy) (core.Policy, error) {
	q := p
	if d.replicas > 1 {
		var err error
		if q, err = divide(p, d.replicas); err != nil {
			return core.Policy{}, err
		}
	}
	if d.degrade != nil {
		q = d.degrade(q)
		switch {
		case !q.Valid():
			return core.Policy{}, fmt.Errorf("%w %q: WithDegrade returned an invalid policy", core.ErrInvalidPolicy, p.Name())
		case q.Name() != p.Name() || q.Algorithm() != p.Algorithm():
			return core.Policy{}, fmt.Errorf("%w %q: WithDegrade returned %q (%s); want the same name and algorithm", core.ErrInvalidPolicy, p.Name(), q.Name(), q.Algorithm())
		}
	}
	return q, nil
}

// divide is 1/n of p: the limit (and burst) divided by n, rounded down, and never
// below the policy's default cost. Bucket algorithms keep their rate exact by
// stretching the period instead (10 per second over 3 replicas is 10 per 3 seconds);
// window algorithms keep their windows and divide the limit.
func divide(p core.Policy, n int64) (core.Policy, error) {
	floor := p.DefaultCost()
	var q core.Policy
	var err error
	switch p.Algorithm() {
	case core.Concurrency:
		q, err = core.NewConcurrencyPolicy(p.Name(), max(p.Limit()/n, floor), p.Period(), core.WithDefaultCost(p.DefaultCost()))
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		rate := core.Rate{Limit: p.Limit(), Period: time.Duration(n) * p.Period()}
		if p.Limit()%n == 0 {
			rate = core.Rate{Limit: p.Limit() / n, Period: p.Period()}
		}
		q, err = core.NewPolicy(p.Name(), p.Algorithm(), rate, core.WithBurst(max(p.Burst()/n, floor)), core.WithDefaultCost(p.DefaultCost()))
		if err != nil { // a stretched period beyond the exact range: round the limit down instead
			q, err = core.NewPolicy(p.Name(), p.Algorithm(), core.Rate{Limit: max(p.Limit()/n, 1), Period: p.Period()},
				core.WithBurst(max(p.Burst()/n, floor)), core.WithDefaultCost(p.DefaultCost()))
		}
	default:
		q, err = core.NewPolicy(p.Name(), p.Algorithm(), core.Rate{Limit: max(p.Limit()/n, floor), Period: p.Period()}, core.WithDefaultCost(p.DefaultCost()))
	}
	if err != nil {
		return core.Policy{}, fmt.Errorf("resilient: WithReplicas(%d): policy %q: %w", n, p.Name(), err)
	}
	return q, nil
}

// localRequest is req on the degraded policy q. A request that costs more than q can
// ever hold spends all of it: it is admitted only when the local allowance is full.
func localRequest(req core.Request, q core.Policy) core.Request {
	req.Policy = q
	if cost := req.EffectiveCost(); cost > q.Capacity() {
		req.Cost = q.Capacity()
	}
	return req
}
