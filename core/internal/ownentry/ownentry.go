// Package ownentry decides a request on its key's own state only, for a charge that
// must stay with its key. A core/memory store that has no room for a new key decides
// it against its policy's shared overflow entry; Local mode's seed of a key's
// allowance (core/resilient) must not go there, or the key's own entry, created once a
// slot frees, starts full.
//
// core/memory registers its decision when it is initialised, so that the memory
// store's exported API stays that of a core.Store.
package ownentry

import (
	"context"

	"github.com/go-ratelimit/ratelimit/core"
)

// Decider decides req in store on its key's own state, creating it when there is
// room. own is false when there is none: nothing was decided or charged. handled is
// false when store is not of the registering package's kind.
type Decider func(ctx context.Context, store core.Store, req core.Request) (res core.Result, own, handled bool, err error)

var decider Decider

// Register sets the Decider. core/memory calls it from an init function, before any
// decision.
func Register(d Decider) { decider = d }

// Decide decides req in store on its key's own state. own is false, with nothing
// decided or charged, when store has no room for the key's state. A store that the
// registered Decider does not handle is asked Decide, and own is true: only the
// memory store is known to decide a key on state that other keys share.
func Decide(ctx context.Context, store core.Store, req core.Request) (res core.Result, own bool, err error) {
	if decider != nil {
		if res, own, handled, err := decider(ctx, store, req); handled {
			return res, own, err
		}
	}
	res, err = store.Decide(ctx, req)
	return res, true, err
}
