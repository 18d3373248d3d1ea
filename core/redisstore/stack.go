package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// refundTimeout bounds the refunds of a stack whose caller's ctx has ended: charges
// taken must be undone even when the caller has gone.
const refundTimeout = time.Second

// groups splits a stack's keys into the groups one script call may touch, in order of
// first appearance, or returns nil when all of them fit in one call.
func (s *Store) groups(keys []string) [][]int {
	if len(keys) < 2 || s.topology == standalone && !s.split {
		return nil
	}
	var groups [][]int
	var labels []any
	for i, key := range keys {
		var label any = i // split: every key alone
		switch {
		case s.split:
		case s.topology == cluster:
			label = slotOf(key)
		case s.topology == ring:
			label = hashTagOf(key)
		}
		g := 0
		for g < len(labels) && labels[g] != label {
			g++
		}
		if g == len(labels) {
			labels = append(labels, label)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	if len(groups) == 1 {
		return nil
	}
	return groups
}

// group is the requests of one script call, gathered from a stack.
type group struct {
	members []int
	reqs    []core.Request
	keys    []string
	results []core.Result
}

func gather(members []int, reqs []core.Request, keys []string) *group {
	g := &group{members: members, reqs: make([]core.Request, len(members)), keys: make([]string, len(members)),
		results: make([]core.Result, len(members))}
	for j, i := range members {
		g.reqs[j], g.keys[j] = reqs[i], keys[i]
	}
	return g
}

func (g *group) scatter(results []core.Result) {
	for j, i := range g.members {
		results[i] = g.results[j]
	}
}

// decideAcrossSlots decides a stack whose keys lie in several slots: it charges each
// group in order, all at the instant of the first call. When a group refuses, it
// refunds the groups charged before it and peeks at the groups after it, so the stack
// spends nothing and reports what transition.StepStack reports. Between a charge and its
// refund, concurrent decisions on those keys see the charge (they may be refused,
// never admitted wrongly); a process that dies in between leaves the charge in place.
func (s *Store) decideAcrossSlots(ctx context.Context, now int64, reqs []core.Request, keys []string, results []core.Result, members [][]int) (bool, error) {
	groups := make([]*group, len(members))
	for g := range members {
		groups[g] = gather(members[g], reqs, keys)
	}
	for g, gr := range groups {
		at, allowed, err := s.decide(ctx, modeCharge, now, gr.reqs, gr.keys, gr.results)
		if err != nil {
			return false, errors.Join(err, s.refund(ctx, now, groups[:g]))
		}
		now = at
		gr.scatter(results)
		if allowed {
			continue
		}
		err = s.refund(ctx, now, groups[:g])
		for _, later := range groups[g+1:] {
			if _, _, peekErr := s.decide(ctx, modePeek, now, later.reqs, later.keys, later.results); peekErr != nil {
				err = errors.Join(err, peekErr)
			}
		}
		for _, gr := range groups {
			gr.scatter(results)
		}
		return false, err
	}
	return true, nil
}

// refund undoes the charges of groups taken at now (transition.Refund at the same instant,
// which restores what any later decision sees, and releases leases taken); their
// results become what a peek at now reports. It goes on after the caller's ctx has
// ended, within refundTimeout.
func (s *Store) refund(ctx context.Context, now int64, groups []*group) error {
	if len(groups) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refundTimeout)
	defer cancel()
	var errs []error
	for _, gr := range groups {
		if _, _, err := s.decide(ctx, modeUndo, now, gr.reqs, gr.keys, gr.results); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
