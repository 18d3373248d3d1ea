package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

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
	f.Add(int64(0), int64(0), int64(0), int64(0), int64(10_000_000_000_000), int64(0), int64(0), 0) // a wait past time.Duration
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

// FuzzParseSingle feeds arbitrary strings to the parser of single-decision replies: it
// must never panic, and whatever it accepts must be a well-formed decision made of the
// reply's six numbers, in their order.
func FuzzParseSingle(f *testing.F) {
	for _, seed := range []string{
		"1767225600000 1 4 0 200 0", "1767225600000 0 0 100 1000 0", "1767225600000 1 5 0 200 100",
		"", " ", "1 1 1 1 1", "1767225600000 1 4 0 200 0 ", "-0 1 4 0 200 0", "+1 1 4 0 200 0",
		"1767225600000 1 -4 0 200 0", "01767225600000 1 4 0 200 0",
	} {
		f.Add(seed)
	}
	policy := core.MustPolicy("fuzz", core.LeakyBucket, core.PerSecond(5))
	f.Fuzz(func(t *testing.T, reply string) {
		req := core.Request{Policy: policy, Key: "k"}
		var r core.Result
		if err := parseSingle(reply, &req, &r); err != nil {
			return
		}
		if r.RetryAfter < 0 || r.ResetAfter < 0 || r.Delay < 0 || r.Allowed && r.RetryAfter != 0 ||
			r.Policy != "fuzz" || r.Limit != policy.Capacity() || r.Remaining > policy.Capacity()+1 || r.DecidedAt.UnixMilli() < 0 {
			t.Fatalf("accepted %q as %+v", reply, r)
		}
		allowed := 0
		if r.Allowed {
			allowed = 1
		}
		read := []int64{r.DecidedAt.UnixMilli(), int64(allowed), r.Remaining,
			r.RetryAfter.Milliseconds(), r.ResetAfter.Milliseconds(), r.Delay.Milliseconds()}
		fields := strings.Split(reply, " ")
		if len(fields) != len(read) {
			t.Fatalf("accepted %q, which has %d fields", reply, len(fields))
		}
		for i, field := range fields {
			if n, err := strconv.ParseInt(field, 10, 64); err != nil || n != read[i] {
				t.Fatalf("accepted %q as %v", reply, read)
			}
		}
	})
}

// FuzzDecideArguments runs the stack script of every algorithm with arbitrary arguments (the fuzzed
// string split at spaces, with '|' standing for a space inside an argument): it
// answers with a RATELIMIT error or a reply the parser accepts, and an error writes
// nothing.
func FuzzDecideArguments(f *testing.F) {
	for _, seed := range []string{
		"charge 1767225600000 1 tb|1|1|10 1 0",
		"charge redis 1 gcra|100|1|10 3 0",
		"peek 5 60000 log|5|60000 1 0",
		"refund 1767225600000 1 fw|3|250 1 0",
		"refund 1767225600000 1 sw|3|250 1 1767225599999",
		"refund 1767225600000 1 log|5|60000 2 -1",
		"refund 1767225600000 1 log|5|60000 2 1e3",
		"refund 1767225600000 1 fw|3|250 1 123456789012345678901",
		"refund 1767225600000 1 cc|2|1000 1 -7",
		"undo 1767225600000 1 cc|2|1000 1 7",
		"charge 1767225600000 1 cc|2|1000 1 18446744073709551615",
		"charge 1767225600000 1 cc|2|1000 1 -7",
		"charge 1767225600000 1 tb|1|1|10 11 0",
		"charge 1e3 1 tb|1|1|10 1 0",
		"charge nan 1 tb|1|1|10 1 0",
		"charge 1767225600000 1 tb|1|nan|10 1 0",
		"charge 1767225600000 1 tb|1|1|10.5 1 0",
		"charge 1767225600000 1 xx|1|1|10 1 0",
		"charge 1767225600000 1 fw|1|1|10 1 0",
		"charge 1767225600000 1 tb|10|1000 1 0",
		"charge 1767225600000 1 tb|99999999999|99999999999|99999999999 1 0",
		"charge 1767225600000 1 tb|1|1|10 nan 0",
		"charge 1767225600000 1 sw|3|250 1 0 gcra|1|1|10 1 0",
		"steal 1 1 tb|1|1|10 1 0",
		"",
	} {
		f.Add(seed)
	}
	server, client := newFuzzRedis(f)
	source := loadScripts(1000).mixed.source
	f.Fuzz(func(t *testing.T, line string) {
		server.FlushAll()
		fields := strings.Split(line, " ")
		n := 1 // one key per policy's arguments, as the script expects when they are well formed
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
		checkScriptAnswer(t, server, client, line, args, replyOfLength(func(m int) bool { return m == 2+fieldsPerResult*n || fields[0] == modeRelease && m == 1 }))
	})
}

// newFuzzRedis is a miniredis server and a client on it, closed with f.
func newFuzzRedis(f *testing.F) (*miniredis.Miniredis, *redis.Client) {
	server := miniredis.NewMiniRedis()
	if err := server.Start(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(server.Close)
	client := redis.NewClient(&redis.Options{Addr: server.Addr()})
	f.Cleanup(func() { client.Close() })
	return server, client
}

// checkScriptAnswer runs one EVAL (args) on an empty server: the script answers with
// its own RATELIMIT error and writes nothing, or replies with integers that check
// accepts (a nil error).
func checkScriptAnswer(t *testing.T, server *miniredis.Miniredis, client *redis.Client, line string, args []any, check func([]int64) error) {
	t.Helper()
	reply, err := client.Do(context.Background(), args...).Int64Slice()
	if err != nil {
		if !strings.HasPrefix(err.Error(), "RATELIMIT") {
			t.Fatalf("%q: error %q is not the script's own", line, err)
		}
		if keys := server.Keys(); len(keys) != 0 {
			t.Fatalf("%q: rejected, but wrote %v", line, keys)
		}
		return
	}
	if err := check(reply); err != nil {
		t.Fatalf("%q: reply %v: %v", line, reply, err)
	}
}

// replyOfLength is a check for checkScriptAnswer: the reply has a length that valid
// accepts.
func replyOfLength(valid func(int) bool) func([]int64) error {
	return func(reply []int64) error {
		if !valid(len(reply)) {
			return fmt.Errorf("unexpected length %d", len(reply))
		}
		return nil
	}
}

// FuzzBatchArguments runs the batch script of every algorithm with arbitrary arguments
// (the fuzzed string split at spaces, with '|' standing for a space inside an
// argument: "now margin", then per run "count spec cost lease"): it answers with a
// RATELIMIT error that writes nothing, or a reply that splitBatchReply accepts for
// its decisions.
func FuzzBatchArguments(f *testing.F) {
	for _, seed := range []string{
		"1767225600000 1 3 gcra|1|1000|5 1 0",
		"redis 1 2 tb|1|1|10 3 0 1 tb|1|1|10 1 0",
		"1767225600000 1 2 fw|3|250 2 0 2 fw|3|250 1 0",
		"1767225600000 1 4 cc|2|1000 1 7",
		"1767225600000 1 0 gcra|1|1000|5 1 0",
		"1767225600000 1 -1 gcra|1|1000|5 1 0",
		"1767225600000 1 1.5 gcra|1|1000|5 1 0",
		"1767225600000 1 2 gcra|1|1000|5 1",
		"1767225600000 1 2 xx|1|1000|5 1 0",
		"nan 1 1 sw|3|250 1 0",
		"",
	} {
		f.Add(seed)
	}
	server, client := newFuzzRedis(f)
	sources := make([]string, 0, len(core.Algorithms()))
	for _, a := range core.Algorithms() {
		sources = append(sources, loadScripts(1000).batch[a].source)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fields := strings.Split(line, " ")
		n := 1 // as many keys as the runs count when they are well formed, else one
		if len(fields) > 2 && (len(fields)-2)%4 == 0 {
			n = 0
			for i := 2; i < len(fields); i += 4 {
				count, err := strconv.Atoi(fields[i])
				if err != nil || count < 1 || n+count > 64 {
					n = 1
					break
				}
				n += count
			}
		}
		for _, source := range sources {
			server.FlushAll()
			args := []any{"eval", source, n}
			for i := 0; i < n; i++ {
				args = append(args, "k"+strconv.Itoa(i%3)) // runs on one key, and keys again
			}
			for _, field := range fields {
				args = append(args, strings.ReplaceAll(field, "|", " "))
			}
			checkScriptAnswer(t, server, client, line, args, func(reply []int64) error {
				_, _, err := splitBatchReply(reply, n)
				return err
			})
		}
	})
}
