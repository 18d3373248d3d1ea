package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestSingleScriptArguments: each algorithm's single-decision script (lua/single.lua
// with its policy written in) charges a well-formed request and answers malformed
// arguments with its own RATELIMIT error, writing nothing.
func TestSingleScriptArguments(t *testing.T) {
	server := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr()})
	t.Cleanup(func() { client.Close() })
	for _, alg := range core.Algorithms {
		var p core.Policy
		if alg == core.Concurrency {
			p = core.MustConcurrencyPolicy("single", 5, time.Second)
		} else {
			p = core.MustPolicy("single", alg, core.PerSecond(5))
		}
		source := singleSource(&p)
		if strings.Contains(source, policyMark) {
			t.Fatalf("%s: the policy was not written in", alg)
		}
		lease := "0"
		if alg == core.Concurrency {
			lease = "7"
		}
		for _, argv := range [][]any{
			{"1767225600000", 0, 6, lease},                   // cost above the capacity
			{"1767225600000", 0, 0, lease},                   // cost below one
			{"1767225600000", 0, "nan", lease},               // cost not a number
			{"1767225600000", 0, "1.5", lease},               // cost not whole
			{"-5", 0, 1, lease},                              // now before the epoch
			{"1767225600000", -1, 1, lease},                  // negative margin
			{"1767225600000", 0, 1},                          // a missing lease
			{"1767225600000", 0, 1, lease, "extra"},          // one argument too many
			{"1767225600000", 0, 1, "123456789012345678901"}, // a lease id too long
		} {
			server.FlushAll()
			args := append([]any{"eval", source, 1, "k"}, argv...)
			line := string(alg)
			checkScriptAnswer(t, server, client, line, args, replyOfLength(func(int) bool { return false }))
		}
		server.FlushAll()
		args := []any{"eval", source, 1, "k", "1767225600000", 0, 1, lease}
		checkScriptAnswer(t, server, client, string(alg), args, replyOfLength(func(m int) bool { return m == 2+fieldsPerResult }))
		if len(server.Keys()) != 1 {
			t.Fatalf("%s: an admitted charge wrote %v", alg, server.Keys())
		}
	}
}
