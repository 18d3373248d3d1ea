package main

import (
	"cmp"
	"slices"

	"github.com/go-ratelimit/ratelimit/core"
)

// maxBadLineSamples is how many bad lines the summary names.
const maxBadLineSamples = 5

// topKeys is how many of the most refused keys the summary and the report list.
const topKeys = 10

// keyCount is what was decided for one key.
type keyCount struct {
	requests, refused int64
}

// tally counts what a replay decided. Its memory grows with the keys of the
// trace, never with its length.
type tally struct {
	policy             core.Policy
	requests, admitted int64
	firstMs, lastMs    int64
	keys               map[string]*keyCount
	intervals          intervals

	badLines   int64
	badSamples []badLine // the first maxBadLineSamples

	lateLines int64 // log lines earlier than a line before them
	maxLateMs int64 // by how much at most
}

func newTally(policy core.Policy) *tally {
	return &tally{policy: policy, keys: map[string]*keyCount{}}
}

// decided counts one decision.
func (t *tally) decided(r row, allowed bool) {
	if t.requests == 0 {
		t.firstMs = r.at
	}
	t.lastMs = r.at
	t.requests++
	c := t.keys[r.key]
	if c == nil {
		c = &keyCount{}
		t.keys[r.key] = c
	}
	c.requests++
	if allowed {
		t.admitted++
	} else {
		c.refused++
	}
	t.intervals.add(r.at, allowed)
}

// bad counts a line that could not be read.
func (t *tally) bad(b *badLine) {
	t.badLines++
	if len(t.badSamples) < maxBadLineSamples {
		t.badSamples = append(t.badSamples, *b)
	}
}

// late counts a line whose time is lateMs before the clock.
func (t *tally) late(lateMs int64) {
	t.lateLines++
	t.maxLateMs = max(t.maxLateMs, lateMs)
}

func (t *tally) refused() int64 { return t.requests - t.admitted }

// refusedKey is a key and its counts, for the lists of the most refused keys.
type refusedKey struct {
	key string
	keyCount
}

// mostRefused returns up to n keys with refusals, the most refused first.
func (t *tally) mostRefused(n int) []refusedKey {
	var keys []refusedKey
	for k, c := range t.keys {
		if c.refused > 0 {
			keys = append(keys, refusedKey{k, *c})
		}
	}
	slices.SortFunc(keys, func(a, b refusedKey) int {
		if c := cmp.Compare(b.refused, a.refused); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	return keys[:min(n, len(keys))]
}
