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
}

func newScript(source string) *script {
	s := &script{Script: redis.NewScript(source), source: source}
	s.sha = s.Hash()
	return s
}

// evalScript runs script with EVALSHA, and with EVAL when the server does not know it
// (after a restart, a failover or SCRIPT FLUSH), as redis.Script.Run does. It reads the
// reply into a typed command (an integer array or an integer), so a reply of another
// type is an error, never a panic, and nothing is parsed by reflection.
func evalScript[C redis.Cmder](ctx context.Context, client processor, s *script, keys []string, arg string, newCmd func(context.Context, ...any) C) (C, error) {
	args := make([]any, 0, 4+len(keys))
	args = append(args, "evalsha", s.sha, len(keys))
	for _, key := range keys {
		args = append(args, key)
	}
	args = append(args, arg)
	cmd := newCmd(ctx, args...)
	err := client.Process(ctx, cmd)
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		args[0], args[1] = "eval", s.source
		cmd = newCmd(ctx, args...)
		err = client.Process(ctx, cmd)
	}
	return cmd, err
}
