package main

import (
	"context"
	"fmt"
	"log/slog"
)

// goRedisLogger takes go-redis's own log lines into the server's log, at debug.
// go-redis prints a line to stderr for every failed dial, outside -log-level:
// against a dead Redis, one per background probe (4 a second per node) for as long
// as it is down, while the resilient store already logs the outage once, at warn.
type goRedisLogger struct{ logger *slog.Logger }

// Printf logs one go-redis line.
func (l goRedisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.logger.DebugContext(ctx, "go-redis", "line", fmt.Sprintf(format, v...))
}
