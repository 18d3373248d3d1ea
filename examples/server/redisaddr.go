package main

import (
	goredis "github.com/redis/go-redis/v9"
)

// misaddressed says why the start-up check's err shows that the one address of
// -redis-addrs cannot serve the limiter for the whole run, or "" when it does not.
// One address is dialled as a standalone server:
//
//   - a replica's answers every script READONLY. Redis and the store treat READONLY
//     as transient (a master demoted by a failover), so the check reports it as
//     unavailable; but an address that is a replica's when the server starts stays
//     one until someone promotes it, and the server would decide in its failure
//     mode for its whole run: unenforced (open), 503 (closed) or per replica (local);
//   - a Sentinel's, or a server without Lua, answers "unknown command" for EVAL,
//     which the check reports without saying what the address is;
//   - a Cluster node's answers MOVED (or ASK) for every key another master serves,
//     which the check reports as an unexpected reply without saying why.
//
// Several addresses are a Cluster's seeds, whose client routes each key to its
// master and follows redirections itself.
func misaddressed(cfg config, err error) string {
	if cfg.store != "redis" || len(cfg.redisAddrs) != 1 {
		return ""
	}
	switch {
	case goredis.HasErrorPrefix(err, "READONLY"):
		return "is a read-only replica: it refuses every write of the limiter until someone promotes it; give the master's address"
	case goredis.HasErrorPrefix(err, "unknown command"):
		return "does not run the limiter's commands (a Sentinel, or a Redis-compatible server without Lua scripts): give a Redis master's address"
	case goredis.HasErrorPrefix(err, "MOVED"), goredis.HasErrorPrefix(err, "ASK"):
		return "is a Redis Cluster node, but one address is dialled as a standalone server: give two or more of the Cluster's nodes " +
			"(a single endpoint twice, host:port,host:port) so that each key goes to its master"
	}
	return ""
}
