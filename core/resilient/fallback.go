package resilient

import (
	"sync"
	"sync/atomic"
	"time"
)

// maxFallbackPolicies bounds how many policy names the fallback tracker follows.
// Policy names come from configuration, so the bound is only a safeguard.
const maxFallbackPolicies = 10_000

// fallbacks tracks which policies are in their failure mode: a policy enters when the
// failure mode first decides for it, and every policy leaves when the shared store
// answers again.
type fallbacks struct {
	active atomic.Int64 // len(since), read without the lock on the fast path

	mu    sync.RWMutex
	since map[string]fallbackEntry
}

type fallbackEntry struct {
	mode  Mode
	since int64 // ns
}

// left is a policy that has left its failure mode.
type left struct {
	policy string
	mode   Mode
	after  time.Duration
}

func newFallbacks() *fallbacks { return &fallbacks{since: map[string]fallbackEntry{}} }

// enter records that policy's failure mode decided at now, and reports whether the
// policy entered it just now.
func (f *fallbacks) enter(policy string, mode Mode, now int64) bool {
	f.mu.RLock()
	_, ok := f.since[policy]
	f.mu.RUnlock()
	if ok {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.since[policy]; ok || len(f.since) >= maxFallbackPolicies {
		return false
	}
	f.since[policy] = fallbackEntry{mode: mode, since: now}
	f.active.Store(int64(len(f.since)))
	return true
}

// leaveAll ends the failure mode of every policy in it, at now.
func (f *fallbacks) leaveAll(now int64) []left {
	if f.active.Load() == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]left, 0, len(f.since))
	for policy, e := range f.since {
		out = append(out, left{policy: policy, mode: e.mode, after: time.Duration(now - e.since)})
		delete(f.since, policy)
	}
	f.active.Store(0)
	return out
}

// isActive reports whether policy is in its failure mode.
func (f *fallbacks) isActive(policy string) bool {
	if f.active.Load() == 0 {
		return false
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.since[policy]
	return ok
}
