package benchmarks

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// commandCounter is a go-redis hook that counts the commands a client sends.
type commandCounter struct{ commands atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.commands.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.commands.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
