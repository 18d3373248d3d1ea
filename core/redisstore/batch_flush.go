package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// batchCmd is one command of a flush: a decision alone (its policy's single-decision
// script, as Store.Decide sends it), or the batch script over the decisions of one
// group.
type batchCmd struct {
	calls   []*batchCall
	script  *script
	batched bool // script is a batch script (lua/batch.lua)
	single  bool // script is a single-decision script (lua/single.lua)
	args    []any
	cmd     redis.Cmder // a *redis.StringCmd for a single-decision script, else a *redis.IntSliceCmd
}

// newCmd builds c's command from its arguments: single-decision scripts reply with a
// string, the others with integers.
func (c *batchCmd) newCmd(ctx context.Context) {
	if c.single {
		c.cmd = redis.NewStringCmd(ctx, c.args...)
	} else {
		c.cmd = redis.NewIntSliceCmd(ctx, c.args...)
	}
}

// batchGroup is what one call of a batch script may decide together: one algorithm
// (its script), one instant, and keys of one Cluster slot or one Ring hash tag (any
// keys on a standalone server).
type batchGroup struct {
	algorithm core.Algorithm
	now       int64
	slot      int
	tag       string
}

// flush sends calls as one pipeline: per group one command, each decision still its
// own atomic step. Commands that met NOSCRIPT did not run; they are sent again as
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
			c.newCmd(ctx)
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

// commands builds one command per group of calls (batchGroup), in order of first
// appearance: the call as Store.Decide sends it when it is alone in its group, else the
// batch script of the group's algorithm over the group.
func (b *batcher) commands(ctx context.Context, calls []*batchCall) []*batchCmd {
	s := b.store
	var groups [][]*batchCall
	index := make(map[batchGroup]int)
	for _, c := range calls {
		g := batchGroup{algorithm: c.req.Policy.Algorithm(), now: c.now}
		switch s.topology {
		case cluster:
			g.slot = slotOf(c.key)
		case ring:
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
	cmds := make([]*batchCmd, len(groups))
	for i, group := range groups {
		c := &batchCmd{calls: group}
		if call := group[0]; len(group) == 1 {
			c.script, c.args, c.single = s.aloneCommand(call.req, call.key, call.now)
		} else {
			c.script, c.batched = s.scripts.batch[call.req.Policy.Algorithm()], true
			c.args = s.batchArgs(c.script.sha, group)
		}
		c.newCmd(ctx)
		cmds[i] = c
	}
	return cmds
}

// batchArgs are the arguments of one EVALSHA of a batch script (lua/batch.lua): the
// command, the SHA, the keys, the group's instant, the TTL margin, then per run of
// consecutive decisions with the same arguments (appendRequest) its length and those
// arguments.
func (s *Store) batchArgs(sha any, group []*batchCall) []any {
	args := make([]any, 0, 3+len(group)+2+1+argsPerPolicy)
	args = append(args, "evalsha", sha, len(group))
	for _, c := range group {
		args = append(args, c.key)
	}
	args = append(args, instantArg(group[0].now), s.margin)
	run := 0 // where the current run's count is
	var request [argsPerPolicy]any
	for i, c := range group {
		next := s.appendRequest(request[:0], &c.req)
		if i > 0 && next[0] == args[run+1] && next[1] == args[run+2] && next[2] == args[run+3] {
			args[run] = args[run].(int) + 1
			continue
		}
		run = len(args)
		args = append(args, 1)
		args = append(args, next...)
	}
	return args
}

// answer gives every call of c its result or its own error.
func (b *batcher) answer(c *batchCmd) {
	if !c.batched {
		call := c.calls[0]
		reqs := [1]core.Request{call.req}
		var results [1]core.Result
		if err := c.cmd.Err(); err != nil {
			call.answer(core.Result{}, b.store.failed(call.ctx, reqs[:], err))
		} else if err := c.parseAlone(reqs[:], results[:]); err != nil {
			call.answer(core.Result{}, unexpectedReply(reqs[:], err))
		} else {
			c.script.loaded.Store(true)
			call.answer(results[0], nil)
		}
		return
	}
	if err := c.cmd.Err(); err != nil {
		for _, call := range c.calls {
			call.answer(core.Result{}, b.store.failed(call.ctx, []core.Request{call.req}, err))
		}
		return
	}
	now, entries, err := splitBatchReply(c.cmd.(*redis.IntSliceCmd).Val(), len(c.calls))
	if err != nil {
		for _, call := range c.calls {
			call.answer(core.Result{}, unexpectedReply([]core.Request{call.req}, err))
		}
		return
	}
	for i, call := range c.calls {
		call.answer(batchDecision(call, now, entries[i]))
	}
}

// parseAlone reads the reply of c's one decision, as Store.Decide does.
func (c *batchCmd) parseAlone(reqs []core.Request, results []core.Result) error {
	if c.single {
		return parseSingle(c.cmd.(*redis.StringCmd).Val(), &reqs[0], &results[0])
	}
	_, _, err := parseDecision(c.cmd.(*redis.IntSliceCmd).Val(), reqs, results)
	return err
}

// batchDecision reads one decision's entry of a batch reply, decided at now, as
// Store.Decide does.
func batchDecision(call *batchCall, now int64, entry batchEntry) (core.Result, error) {
	reqs := []core.Request{call.req}
	if entry.err != nil {
		return core.Result{}, wrapError(call.ctx, reqs, entry.err, false) // a script's own reply
	}
	var result core.Result
	f := entry.fields
	if !fillResult(&call.req, now, f[0], f[1], f[2], f[3], f[4], &result) {
		return core.Result{}, unexpectedReply(reqs, fmt.Errorf("fields %v", f))
	}
	return result, nil
}
