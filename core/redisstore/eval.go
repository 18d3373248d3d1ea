package redisstore

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// script is a Lua script with its source, for EVAL after a NOSCRIPT.
type script struct {
	source string
	sha    any         // its SHA-1, boxed once so that calls do not box it again
	loaded atomic.Bool // a call has succeeded (single-decision scripts only)
}

func newScript(source string) *script {
	return &script{source: source, sha: redis.NewScript(source).Hash()}
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
