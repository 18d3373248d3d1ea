package storetest

import (
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
)

// model is the reference: the pure transitions over a map of states.
type model struct {
	states map[[2]string]transition.State
}

func newModel() *model { return &model{states: map[[2]string]transition.State{}} }

func (m *model) decide(req core.Request, now int64) core.Result {
	k := [2]string{req.Policy.ID(), req.Key}
	next, res := transition.StepRequest(m.states[k], &req, now)
	if res.Allowed {
		m.states[k] = clone(next)
	}
	return res
}

func (m *model) decideStack(reqs []core.Request, now int64) ([]core.Result, bool) {
	states := make([]transition.State, len(reqs))
	for i, r := range reqs {
		states[i] = m.states[[2]string{r.Policy.ID(), r.Key}]
	}
	results := make([]core.Result, len(reqs))
	next, allowed := transition.StepStack(states, reqs, now, results)
	if allowed {
		for i, r := range reqs {
			m.states[[2]string{r.Policy.ID(), r.Key}] = clone(next[i])
		}
	}
	return results, allowed
}

func (m *model) release(req core.Request, lease uint64) {
	k := [2]string{req.Policy.ID(), req.Key}
	if s, ok := m.states[k]; ok {
		m.states[k] = transition.ReleaseLease(clone(s), lease)
	}
}

// clone copies a state's slices so that the model never shares memory between states.
func clone(s transition.State) transition.State {
	s.Log = append([]transition.LogEntry(nil), s.Log...)
	s.Leases = append([]transition.Lease(nil), s.Leases...)
	return s
}
