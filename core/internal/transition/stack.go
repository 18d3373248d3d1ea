package transition

import "github.com/go-ratelimit/ratelimit/core"

// StepStack is the pure reference for core.Store.DecideStack: it decides reqs
// against states (one per request, same order) at now, all-or-nothing. When every
// request is admitted it returns the new states; otherwise it returns states
// unchanged. The results of a refused stack report each policy's own verdict, so a
// client learns which policies refused; none of them spent anything.
func StepStack(states []State, reqs []core.Request, now int64, results []core.Result) ([]State, bool) {
	next := make([]State, len(states))
	allowed := true
	for i := range reqs {
		next[i], results[i] = StepRequest(states[i], &reqs[i], now)
		allowed = allowed && results[i].Allowed
	}
	if !allowed {
		RefuseStack(states, reqs, now, results)
		return states, false
	}
	return next, true
}

// RefuseStack rewrites the results of a stack that was refused as a whole: each
// policy that would have admitted the request reports it as Peek does, not admitted
// and with its quota unspent. Stores call it so that every store reports a refused
// stack the same way.
func RefuseStack(states []State, reqs []core.Request, now int64, results []core.Result) {
	for i := range results {
		if results[i].Allowed {
			_, results[i] = Peek(states[i], &reqs[i].Policy, now, reqs[i].EffectiveCost())
		}
	}
}
