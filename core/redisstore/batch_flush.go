package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// batchCmd is one command of a flush: a decision alone, or the batch script over the
// decisions of one script whose keys one call may touch.
type batchCmd struct {
	calls   []*batchCall
	script  *script // what args run: a one-key script, or its batch form
	batched bool    // script is a batch form
	args    []any
	cmd     redis.Cmder // newCommand's
}

// newCommand is the command that sends c.args and reads its reply: a lean script
// alone may pack its reply into one integer (parseLeanReply), so it is read as a
// redis.Cmd; batch forms and the decide script reply with arrays of integers.
func (c *batchCmd) newCommand(ctx context.Context) redis.Cmder {
	if c.script.lean && !c.batched {
		return redis.NewCmd(ctx, c.args...)
	}
	return redis.NewIntSliceCmd(ctx, c.args...)
}

// batchGroup is what one call may decide together: one script, and keys of one Cluster
// slot or one Ring hash tag (any keys on a standalone server).
type batchGroup struct {
	slot   int
	tag    string
	script *script
}

// flush sends calls as one pipeline: per group one command, each decision still its
// own atomic script run. Commands that met NOSCRIPT did not run; they are sent again as
// EVAL, so nothing is charged twice. Every call gets its own answer.
func (b *batcher) flush(calls []*batchCall) {
	ctx, cancel := batchContext(calls)
	defer cancel()
	cmds := b.commands(ctx, calls)
	b.exec(ctx, cmds)
	var again []*batchCmd
	for _, c := range cmds {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			c.args[0], c.args[1] = "eval", c.script.source
			c.cmd = c.newCommand(ctx)
			again = append(again, c)
		}
	}
	if len(again) > 0 {
		b.exec(ctx, again)
	}
	for _, c := range cmds {
		b.answer(c)
	}
}

// batchContext bounds a batch by the latest deadline of its callers, and by none when
// one of them has none: the callers' own contexts decide when each stops waiting, and
// no caller's cancellation fails the others.
func batchContext(calls []*batchCall) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, c := range calls {
		deadline, ok := c.ctx.Deadline()
		if !ok {
			return context.Background(), func() {}
		}
		if deadline.After(latest) {
			latest = deadline
		}
	}
	return context.WithDeadline(context.Background(), latest)
}

func (b *batcher) exec(ctx context.Context, cmds []*batchCmd) {
	pipe := b.pipeline()
	for _, c := range cmds {
		_ = pipe.Process(ctx, c.cmd) // queues the command; errors arrive on it
	}
	_, _ = pipe.Exec(ctx) // each command holds its own error
}

// commands builds one command per group of calls: the call's lean script (its
// policy's own when it has one) or decide script when it is alone in its group, else
// the batch form of the group's shared script over the group.
func (b *batcher) commands(ctx context.Context, calls []*batchCall) []*batchCmd {
	s := b.store
	for _, c := range calls { // the shared script, which the batch form runs
		if c.script = s.scripts.leanFor(&c.req.Policy); c.script == nil {
			c.script = s.scripts.byAlgorithm[c.req.Policy.Algorithm()]
		}
	}
	var groups [][]*batchCall
	if s.topology == standalone { // any keys: one group per script, of which there are few
		var scripts []*script
	calls:
		for _, c := range calls {
			for i, script := range scripts {
				if script == c.script {
					groups[i] = append(groups[i], c)
					continue calls
				}
			}
			scripts = append(scripts, c.script)
			groups = append(groups, []*batchCall{c})
		}
	} else {
		index := make(map[batchGroup]int)
		for _, c := range calls {
			g := batchGroup{script: c.script}
			if s.topology == cluster {
				g.slot = slotOf(c.key)
			} else {
				g.tag = hashTagOf(c.key)
			}
			i, ok := index[g]
			if !ok {
				i = len(groups)
				index[g] = i
				groups = append(groups, nil)
			}
			groups[i] = append(groups[i], c)
		}
	}
	cmds := make([]*batchCmd, len(groups))
	for i, group := range groups {
		var c *batchCmd
		if call := group[0]; len(group) == 1 {
			c = &batchCmd{calls: group}
			if c.script, c.args = s.singleCommand(call.now, &call.req, call.key); c.script == nil {
				c.script, c.args = call.script, s.sharedArgs(call)
			}
		} else {
			c = b.batchCommand(group)
		}
		c.cmd = c.newCommand(ctx)
		cmds[i] = c
	}
	return cmds
}

// batchCommand joins the one-key commands of a group into one call of their script's
// batch form: the keys, then per run of decisions with equal arguments the number of
// its decisions, the count of their arguments, the position of their instant, and the
// arguments (see batchDriver).
func (b *batcher) batchCommand(group []*batchCall) *batchCmd {
	script := b.batchScript(group[0].script)
	for _, c := range group {
		c.args = b.store.sharedArgs(c)
	}
	size := 3
	for _, c := range group {
		size += len(c.args) // at most: the key, a run's header, the arguments
	}
	args := make([]any, 3, size)
	args[0], args[1], args[2] = "evalsha", script.sha, len(group)
	for _, c := range group {
		args = append(args, c.args[3]) // "evalsha", SHA, 1, key, arguments…
	}
	for start := 0; start < len(group); {
		own := group[start].args[4:]
		end := start + 1
		for end < len(group) && sameArgs(group[end].args[4:], own) {
			end++
		}
		args = append(args, end-start, len(own), serverTimeArg(own))
		args = append(args, own...)
		start = end
	}
	return &batchCmd{calls: group, script: script, batched: true, args: args}
}

// sharedArgs are the arguments of c alone with its shared script (c.script): a lean
// script's, or the decide script's.
func (s *Store) sharedArgs(c *batchCall) []any {
	if c.script.lean {
		return s.singleArgs(c.script.sha, c.now, &c.req, c.key, s.specs.get(&c.req.Policy).single)
	}
	return s.scriptArgs(c.script.sha, modeCharge, c.now, []core.Request{c.req}, []string{c.key})
}

// sameArgs reports whether two decisions' arguments are equal strings and integers,
// without comparing values of other types (which == could not compare).
func sameArgs(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		switch x := a[i].(type) {
		case string:
			if y, ok := b[i].(string); !ok || x != y {
				return false
			}
		case int64:
			if y, ok := b[i].(int64); !ok || x != y {
				return false
			}
		case int:
			if y, ok := b[i].(int); !ok || x != y {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// serverTimeArg is the 1-based position of the argument that asks the script for the
// server's TIME ("redis", as singleArgs and scriptArgs write it), or 0 when the instant
// is the caller's. No other argument is that string: policy specs hold spaces, costs
// and leases are numbers.
func serverTimeArg(args []any) int {
	for i, arg := range args {
		if s, ok := arg.(string); ok && s == "redis" {
			return i + 1
		}
	}
	return 0
}

// batchScript is the batch form of a one-key script, built on first use.
func (b *batcher) batchScript(single *script) *script {
	if s, ok := b.batchScripts.Load(single); ok {
		return s.(*script)
	}
	s, _ := b.batchScripts.LoadOrStore(single, newBatchScript(single))
	return s.(*script)
}

// answer gives every call of c its result or its own error.
func (b *batcher) answer(c *batchCmd) {
	if !c.batched {
		call := c.calls[0]
		call.answer(aloneDecision(call, c.cmd))
		return
	}
	if err := c.cmd.Err(); err != nil {
		for _, call := range c.calls {
			call.answer(core.Result{}, wrapError(call.ctx, []core.Request{call.req}, err))
		}
		return
	}
	entries, err := splitBatchReply(c.cmd.(*redis.IntSliceCmd).Val(), len(c.calls))
	if err != nil {
		for _, call := range c.calls {
			call.answer(core.Result{}, unexpectedReply([]core.Request{call.req}, err))
		}
		return
	}
	for i, call := range c.calls {
		call.answer(decision(call, c.script.lean, entries[i].ints, entries[i].err))
	}
}

// aloneDecision reads the reply of a call's command alone in its group (newCommand)
// as Store.Decide does.
func aloneDecision(call *batchCall, cmd redis.Cmder) (core.Result, error) {
	if decide, ok := cmd.(*redis.IntSliceCmd); ok {
		return decision(call, false, decide.Val(), decide.Err())
	}
	var result core.Result
	if err := readLeanReply(call.ctx, cmd.(*redis.Cmd), &call.req, &result); err != nil {
		return core.Result{}, err
	}
	return result, nil
}

// decision reads one decision's reply as Store.Decide does: as a lean script's reply
// when lean, else as the decide script's.
func decision(call *batchCall, lean bool, reply []int64, err error) (core.Result, error) {
	reqs := [1]core.Request{call.req}
	if err != nil {
		return core.Result{}, wrapError(call.ctx, reqs[:], err)
	}
	var results [1]core.Result
	if lean {
		err = parseLean(reply, &reqs[0], &results[0])
	} else {
		_, _, err = parseDecision(reply, reqs[:], results[:])
	}
	if err != nil {
		return core.Result{}, unexpectedReply(reqs[:], err)
	}
	return results[0], nil
}
