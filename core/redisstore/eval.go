package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// script is a Lua script with its source, for EVAL after a NOSCRIPT.
type script struct {
	*redis.Script
	source string
	sha    any // Hash(), boxed once so that calls do not box it again
	// prologue and body split source for the script's batch form (newBatchScript):
	// the prologue depends on the arguments alone and may return an error reply; the
	// body reads and writes KEYS[1]. A script without a prologue is all body.
	prologue, body string
	// batchBody is body as the batch form runs it (replying with an array); empty when
	// the batch form runs body as it is.
	batchBody string
	// speculates: batchBody may speculate that its key is missing
	// (lua/batch_state.lua).
	speculates bool
	// lean: the script (or, in a batch form, each of its decisions) replies as a lean
	// single-charge script (parseLean), not as decide.lua (parseDecision).
	lean bool
}

func newScript(source string) *script {
	s := &script{Script: redis.NewScript(source), source: source, body: source}
	s.sha = s.Hash()
	return s
}

// newLeanScript is the lean script of a prologue followed by a body, and the body of
// its batch form, which may speculate (see script).
func newLeanScript(prologue, body, batchBody string, speculates bool) *script {
	s := newScript(prologue + body)
	s.prologue, s.body, s.batchBody, s.speculates, s.lean = prologue, body, batchBody, speculates, true
	return s
}

// evalScript sends args (an EVALSHA of script: "evalsha", SHA, key count, keys, then
// arguments) and sends it again as EVAL when the server does not know the script
// (after a restart, a failover or SCRIPT FLUSH), as redis.Script.Run does. It reads
// the reply into a typed command (an integer array or an integer), so a reply of
// another type is an error, never a panic, and nothing is parsed by reflection.
func evalScript[C redis.Cmder](ctx context.Context, client processor, s *script, args []any, newCmd func(context.Context, ...any) C) (C, error) {
	cmd := newCmd(ctx, args...)
	err := client.Process(ctx, cmd)
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		args[0], args[1] = "eval", s.source
		cmd = newCmd(ctx, args...)
		err = client.Process(ctx, cmd)
	}
	return cmd, err
}
