// Package ownentry asks a store to decide a request on its key's own state only, for
// a charge that must stay with its key. A core/memory store that has no room for a
// new key decides it against its policy's shared overflow entry; Local mode's seed
// of a key's allowance (core/resilient) must not go there, or the key's own entry,
// created once a slot frees, starts full.
//
// The request travels in the context, which only this module can mark: the memory
// store's exported API stays that of a core.Store, and a store wrapping one passes
// the mark on.
package ownentry

import (
	"context"
	"errors"

	"github.com/go-ratelimit/ratelimit/core"
)

// ErrNoRoom is a store's answer to a decision marked by Only when it has no room for
// the key's own state: nothing was decided or charged.
var ErrNoRoom = errors.New("no room for the key's own state")

// onlyKey is the context key of Only's mark.
type onlyKey struct{}

// Only marks ctx: a decision under it must be made on the key's own state, or not at
// all (ErrNoRoom).
func Only(ctx context.Context) context.Context { return context.WithValue(ctx, onlyKey{}, true) }

// Requested reports whether ctx carries Only's mark. A store asks it only when it
// would otherwise decide on state other keys share, off its hot path.
func Requested(ctx context.Context) bool {
	only, _ := ctx.Value(onlyKey{}).(bool)
	return only
}

// Decide decides req in store on its key's own state. own is false, with nothing
// decided or charged, when store has no room for the key's state; a store that never
// decides a key on shared state (any but the memory store) just decides it.
func Decide(ctx context.Context, store core.Store, req core.Request) (res core.Result, own bool, err error) {
	res, err = store.Decide(Only(ctx), req)
	if errors.Is(err, ErrNoRoom) {
		return core.Result{}, false, nil
	}
	return res, true, err
}
