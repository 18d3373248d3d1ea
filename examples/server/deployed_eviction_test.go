package main

import (
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestEvictingRedisIsLoggedAtStart: a Redis whose maxmemory-policy would delete
// rate-limit state under memory pressure (core/redisstore's
// TestCheckEvictionNamesTheServersThatLoseState shows a flood of invented keys
// unlocking a locked account on one) is named in a warning when the server starts;
// one that never evicts is not.
func TestEvictingRedisIsLoggedAtStart(t *testing.T) {
	const warning = "Redis may delete rate-limit state"
	evicting := redistest.StartServer(t, "--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru")
	srv := startServer(t, "chi", "-store", "redis", "-redis-addrs", evicting.Addr)
	line := grepLines(srv.logs.String(), warning)
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, evicting.Addr) || !strings.Contains(line, "volatile-lru") {
		t.Errorf("start on an evicting Redis: want a warning naming %s and volatile-lru, got:\n%s", evicting.Addr, srv.logs.String())
	}

	safe := redistest.StartServer(t, "--maxmemory", "64mb", "--maxmemory-policy", "noeviction")
	srv = startServer(t, "chi", "-store", "redis", "-redis-addrs", safe.Addr)
	if logs := srv.logs.String(); strings.Contains(logs, warning) || strings.Contains(logs, "level=WARN") {
		t.Errorf("start on a Redis that never evicts: want no warning, got:\n%s", logs)
	}
}
