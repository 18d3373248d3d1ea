package redisstore

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// FuzzParseDecision feeds arbitrary integer replies to the reply parser: it must never
// panic, and whatever it accepts must be a well-formed decision.
func FuzzParseDecision(f *testing.F) {
	f.Add(int64(1767225600000), int64(1), int64(1), int64(4), int64(0), int64(200), int64(0), 0)
	f.Add(int64(1767225600000), int64(0), int64(0), int64(0), int64(100), int64(1000), int64(0), 0)
	f.Add(int64(-1), int64(2), int64(1), int64(-4), int64(-1), int64(1<<62), int64(-9), 3)
	f.Add(int64(0), int64(0), int64(1), int64(4), int64(0), int64(200), int64(0), 1)
	policy := core.MustPolicy("fuzz", core.LeakyBucket, core.PerSecond(5))
	f.Fuzz(func(t *testing.T, now, all, allowed, remaining, retry, reset, delay int64, trim int) {
		reply := []int64{now, all, allowed, remaining, retry, reset, delay}
		if trim > 0 && trim <= len(reply) {
			reply = reply[:len(reply)-trim]
		}
		reqs := []core.Request{{Policy: policy, Key: "k"}}
		results := make([]core.Result, 1)
		at, ok, err := parseDecision(reply, reqs, results)
		if err != nil {
			if ok {
				t.Fatal("an error with an admission")
			}
			return
		}
		r := results[0]
		if ok != r.Allowed || at < 0 || r.RetryAfter < 0 || r.ResetAfter < 0 || r.Delay < 0 || r.Allowed && r.RetryAfter != 0 ||
			r.Policy != "fuzz" || r.Limit != policy.Capacity() || r.Remaining > policy.Capacity()+1 {
			t.Fatalf("accepted %v as %+v (allowed %v)", reply, r, ok)
		}
	})
}

// FuzzParseLean feeds arbitrary integer replies to the lean scripts' reply parser: it
// must never panic, and whatever it accepts must be a well-formed decision.
func FuzzParseLean(f *testing.F) {
	f.Add(int64(1), int64(4), int64(200), int64(0), int64(0), 2)
	f.Add(int64(0), int64(0), int64(1000), int64(100), int64(0), 1)
	f.Add(int64(1), int64(3), int64(600), int64(0), int64(400), 0)
	f.Add(int64(2), int64(-4), int64(-1), int64(1<<62), int64(-9), 0)
	f.Add(int64(1), int64(4), int64(200), int64(10), int64(0), 1)
	policy := core.MustPolicy("fuzz", core.LeakyBucket, core.PerSecond(5))
	f.Fuzz(func(t *testing.T, allowed, remaining, reset, retry, delay int64, trim int) {
		reply := []int64{allowed, remaining, reset, retry, delay}
		if trim > 0 && trim <= len(reply) {
			reply = reply[:len(reply)-trim]
		}
		req := core.Request{Policy: policy, Key: "k"}
		var r core.Result
		if err := parseLean(reply, &req, &r); err != nil {
			if r.Allowed {
				t.Fatal("an error with an admission")
			}
			return
		}
		if len(reply) < 3 || r.RetryAfter < 0 || r.ResetAfter < 0 || r.Delay < 0 || r.Allowed && r.RetryAfter != 0 ||
			r.Policy != "fuzz" || r.Limit != policy.Capacity() || r.Remaining > policy.Capacity()+1 ||
			r.Allowed != (allowed == 1) || r.Remaining != remaining || r.ResetAfter != time.Duration(reset)*time.Millisecond {
			t.Fatalf("accepted %v as %+v", reply, r)
		}
	})
}

// FuzzDecideArguments runs the decide script with arbitrary arguments (the fuzzed
// string split at spaces, with '|' standing for a space inside an argument): it
// answers with a RATELIMIT error or a reply the parser accepts, and an error writes
// nothing.
func FuzzDecideArguments(f *testing.F) {
	for _, seed := range []string{
		"charge 1767225600000 1 api|tb|1|1|10 1 0",
		"charge redis 1 api|gcra|100|1|10 3 0",
		"peek 5 60000 login|log|5|60000 1 0",
		"refund 1767225600000 1 w|fw|3|250 1 0",
		"undo 1767225600000 1 c|cc|2|1000 1 7",
		"charge 1767225600000 1 c|cc|2|1000 1 18446744073709551615",
		"charge 1767225600000 1 c|cc|2|1000 1 -7",
		"charge 1767225600000 1 api|tb|1|1|10 11 0",
		"charge 1e3 1 api|tb|1|1|10 1 0",
		"charge nan 1 api|tb|1|1|10 1 0",
		"charge 1767225600000 1 api|tb|1|nan|10 1 0",
		"charge 1767225600000 1 api|tb|1|1|10.5 1 0",
		"charge 1767225600000 1 api|xx|1|1|10 1 0",
		"charge 1767225600000 1 api|fw|1|1|10 1 0",
		"charge 1767225600000 1 api|tb|10|1000 1 0",
		"charge 1767225600000 1 api|tb|99999999999|99999999999|99999999999 1 0",
		"charge 1767225600000 1 api|tb|1|1|10 nan 0",
		"steal 1 1 api|tb|1|1|10 1 0",
		"",
	} {
		f.Add(seed)
	}
	server := miniredis.NewMiniRedis()
	if err := server.Start(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(server.Close)
	client := redis.NewClient(&redis.Options{Addr: server.Addr()})
	f.Cleanup(func() { client.Close() })
	source := loadScripts().mixed.source
	f.Fuzz(func(t *testing.T, line string) {
		server.FlushAll()
		fields := strings.Split(line, " ")
		n := 1 // one key per ten policy arguments, as the script expects when they are well formed
		if len(fields) > 3 && (len(fields)-3)%argsPerPolicy == 0 {
			n = (len(fields) - 3) / argsPerPolicy
		}
		args := []any{"eval", source, n}
		for i := 0; i < n; i++ {
			args = append(args, "k"+strconv.Itoa(i))
		}
		for _, field := range fields {
			args = append(args, strings.ReplaceAll(field, "|", " "))
		}
		checkScriptAnswer(t, server, client, line, args, false, decideReplyLength(n))
	})
}
