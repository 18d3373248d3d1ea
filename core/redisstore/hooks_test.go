package redisstore_test

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// commandCounter is a go-redis hook that counts the commands a client sends.
type commandCounter struct {
	commands, evals atomic.Int64
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.commands.Add(1)
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			c.evals.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.commands.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func (c *commandCounter) reset() { c.commands.Store(0); c.evals.Store(0) }

// scripts is the number of script calls since reset; it fails if anything else was sent.
func (c *commandCounter) scripts() int64 {
	if c.commands.Load() != c.evals.Load() {
		return -c.commands.Load()
	}
	return c.evals.Load()
}
