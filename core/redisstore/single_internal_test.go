package redisstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

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

// singleAlgorithms are the buckets, which have a lean single-charge script, in the
// order the fuzz tests number them.
var singleAlgorithms = []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket}

// leanAlgorithms are all the algorithms with a lean single-charge script.
var leanAlgorithms = append(append([]core.Algorithm(nil), singleAlgorithms...), windowAlgorithms...)

// FuzzSingleArguments runs every lean single-charge script with arbitrary arguments
// (the fuzzed string split at spaces): each answers with a RATELIMIT error or a reply
// of one policy, and an error writes nothing.
func FuzzSingleArguments(f *testing.F) {
	for _, seed := range []string{
		"1767225600000 1 1 1 10 1",
		"redis 1 100 1 10 3",
		"1767225600000 1 1 1 10 11",
		"1e3 1 1 1 10 1",
		"nan 1 1 1 10 1",
		"1767225600000 1 1 nan 10 1",
		"1767225600000 1 1 1 10.5 1",
		"1767225600000 1 99999999999 99999999999 99999999999 1",
		"1767225600000 -1 1 1 10 1",
		"1767225600000 1 1 1 10",
		"1767225600000 1 1 1 10 1 7",
		"",
		// the windows' arguments: now margin limit period cost
		"1767225600000 1 10 1000 1",
		"redis 1 10 1000 3",
		"1767225600000 1 10 1000 11",
		"1767225600000 1 nan 1000 1",
		"1767225600000 1 10 1000.5 1",
		"1767225600000 1 10 99999999999 1",
		"1767225600000 1 99999999999999999 1000 1",
		"1767225600000 1 10 1000 1 7",
	} {
		for alg := range len(leanAlgorithms) + len(tickedFiles) + 1 {
			f.Add(seed, alg)
		}
	}
	server, client := newFuzzRedis(f)
	lean := allLeanScripts(loadScripts())
	f.Fuzz(func(t *testing.T, line string, alg int) {
		server.FlushAll()
		s := lean[uint(alg)%uint(len(lean))]
		args := []any{"eval", s.source, 1, "k"}
		for _, field := range strings.Split(line, " ") {
			args = append(args, field)
		}
		checkScriptAnswer(t, server, client, line, args, true, leanReplyLength)
	})
}

// allLeanScripts are the shared lean scripts of every algorithm in leanAlgorithms'
// order, then the ticked ones of GCRA and the leaky bucket, then the counted fixed
// window's.
func allLeanScripts(s scripts) []*script {
	var all []*script
	for _, alg := range leanAlgorithms {
		all = append(all, s.single[alg])
	}
	return append(all, s.ticked[core.GCRA], s.ticked[core.LeakyBucket], s.counted)
}

// leanReplyLength reports whether a lean script may reply with n integers.
func leanReplyLength(n int) bool { return n >= 3 && n <= fieldsPerResult }

// decideReplyLength is the length of the decide script's reply for policies policies.
func decideReplyLength(policies int) func(int) bool {
	return func(n int) bool { return n == 2+fieldsPerResult*policies }
}

// evalInts runs one EVAL (args) and reads its integers: as the store reads a lean
// script's reply alone (a packed admission unpacked, see parseLeanReply) when lean,
// else as an array of integers.
func evalInts(client *redis.Client, lean bool, args []any) ([]int64, error) {
	ctx := context.Background()
	cmd := redis.NewCmd(ctx, args...)
	if err := client.Process(ctx, cmd); err != nil {
		return nil, err
	}
	if !lean {
		return cmd.Int64Slice()
	}
	var buf [fieldsPerResult]int64
	ints, err := leanInts(cmd.Val(), &buf)
	return slices.Clone(ints), err
}

// checkScriptAnswer runs one EVAL (args) on an empty server: the script answers with
// its own RATELIMIT error and writes nothing, or replies with integers of a length
// that validLength accepts (read as evalInts reads them).
func checkScriptAnswer(t *testing.T, server *miniredis.Miniredis, client *redis.Client, line string, args []any, lean bool, validLength func(int) bool) {
	t.Helper()
	reply, err := evalInts(client, lean, args)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "RATELIMIT") {
			t.Fatalf("%q: error %q is not the script's own", line, err)
		}
		if keys := server.Keys(); len(keys) != 0 {
			t.Fatalf("%q: rejected, but wrote %v", line, keys)
		}
		return
	}
	if !validLength(len(reply)) {
		t.Fatalf("%q: reply %v", line, reply)
	}
}

// FuzzSingleMatchesDecide charges one key with the lean script and with the decide
// script from the same stored state: both must accept or reject alike, reply the same
// integers, and leave the same state with the same TTL.
func FuzzSingleMatchesDecide(f *testing.F) {
	const t0 = 1767225600000
	for _, seed := range []struct {
		alg                          int // 0 token bucket, 1 GCRA, 2 leaky bucket
		unit, refill, capacity, cost int64
		now, margin                  int64
		state                        string
	}{
		{0, 1, 1, 10, 1, t0, 1000, ""},
		{0, 1, 1, 10, 1, t0, 0, "3 " + strconv.Itoa(t0-2)},
		{0, 1, 1, 10, 5, t0, 0, "3 " + strconv.Itoa(t0-1)},
		{0, 1, 1, 10, 5, t0, 0, "3 " + strconv.Itoa(t0+50)},
		{0, 1000, 3, 20, 7, t0, 1, "4500 " + strconv.Itoa(t0-900)},
		{0, 1, 3, 10, 1, t0, 0, "5 " + strconv.Itoa(t0-2)},
		{0, 1, 1, 10, 1, t0, 0, "11 " + strconv.Itoa(t0)},
		{0, 1, 1, 10, 1, t0, 0, "x y"},
		{0, 1, 1 << 52, 2, 2, 1<<50 - 1, 31622400000, "0 0"},
		{1, 1, 1, 10, 1, t0, 1000, ""},
		{1, 1, 1000, 1000000, 1, t0, 1000, strconv.Itoa(t0+300) + " 0"},
		{1, 3, 7, 10, 4, t0, 0, strconv.Itoa(t0+5) + " 6"},
		{1, 3, 7, 10, 4, t0, 0, strconv.Itoa(t0+100) + " 1"},
		{1, 3, 7, 10, 10, t0, 0, strconv.Itoa(t0) + " 0"},
		{1, 1, 1, 10, 1, t0, 0, strconv.Itoa(t0) + " 1"},
		{1, 1, 1, 10, 1, t0, 0, "5 7"},
		{2, 1, 1, 10, 1, t0, 1000, ""},
		{2, 1, 1000, 1000000, 1, t0, 1000, strconv.Itoa(t0+300) + " 0"},
		{2, 3, 7, 10, 4, t0, 0, strconv.Itoa(t0+5) + " 6"},
		{2, 3, 7, 10, 4, t0, 0, strconv.Itoa(t0+9) + " 6"},
		{2, 3, 7, 10, 4, t0, 0, strconv.Itoa(t0+100) + " 1"},
		{2, 3, 7, 10, 10, t0, 0, strconv.Itoa(t0) + " 0"},
		{2, 1, 1, 10, 1, t0, 0, strconv.Itoa(t0) + " 1"},
		{2, 1, 1, 10, 1, t0, 0, "5 7"},
		{2, 1000000000, 1, 1000000, 1000000, t0, 5, ""},
		{1, 1000000000, 1, 1000000, 1000000, t0, 5, ""},
		{1, 1, 1, 10, 0, t0, 0, ""},
		{1, 1, 1, 10, 11, t0, 0, ""},
		{0, 0, 1, 10, 1, t0, 0, ""},
		{0, 1 << 40, 1, 1 << 14, 1, t0, 0, ""},
		// ticked states (lua/ticked.lua): one integer of units
		{1, 1, 1000, 1000000, 1, t0, 1000, strconv.Itoa((t0 + 300) * 1000)},
		{1, 3, 7, 10, 4, t0, 0, strconv.Itoa((t0+5)*7 + 6)},
		{1, 3, 7, 10, 4, t0, 0, strconv.Itoa((t0+100)*7 + 1)},
		{1, 3, 7, 10, 10, t0, 0, strconv.Itoa(t0 * 7)},
		{1, 1, 1, 10, 1, t0, 0, strconv.Itoa(t0 - 5)},
		{1, 1, 1, 10, 1, t0, 0, strconv.Itoa(t0 + 9)},
		{1, 1, 1, 10, 1, t0, 0, "0"},
		{1, 1, 1, 10, 1, t0, 0, "-5"},
		{1, 1, 1, 10, 1, t0, 0, "4503599627370497"},
		{1, 1, 1, 10, 1, t0, 0, "99999999999999999999"},
		{1, 1, 1, 10, 1, 0, 0, ""},
		{1, 1, 1024, 10, 1, 1 << 42, 0, ""},
		{1, 1, 1025, 10, 1, t0, 0, ""},
		{2, 1, 1000, 1000000, 1, t0, 1000, strconv.Itoa((t0 + 300) * 1000)},
		{2, 3, 7, 10, 4, t0, 0, strconv.Itoa((t0+5)*7 + 6)},
		{2, 3, 7, 10, 4, t0, 0, strconv.Itoa((t0+9)*7 + 6)},
		{2, 3, 7, 10, 4, t0, 0, strconv.Itoa((t0+100)*7 + 1)},
		{2, 1, 1, 10, 1, t0, 0, strconv.Itoa(t0 + 1)},
		{2, 1, 1, 10, 1, t0, 0, "0"},
	} {
		f.Add(seed.alg, seed.unit, seed.refill, seed.capacity, seed.cost, seed.now, seed.margin, seed.state)
	}
	server, client := newFuzzRedis(f)
	scripts := loadScripts()
	f.Fuzz(func(t *testing.T, algIndex int, unit, refill, capacity, cost, now, margin int64, state string) {
		server.FlushAll()
		alg := singleAlgorithms[uint(algIndex)%uint(len(singleAlgorithms))]
		code := algorithmCode(alg)
		shared := scripts.single[alg]
		isTicked := ticked(alg, unit, refill, capacity)
		if isTicked {
			shared = scripts.ticked[alg]
			if _, err := strconv.Atoi(state); err == nil && !canonicalInteger(state) {
				t.Skip("miniredis's INCRBY reads integers as strconv.Atoi does (a sign, leading zeros), Redis's INCRBY and the decide script only canonical digits; the store never writes such text")
			}
		}
		if state != "" {
			for _, key := range []string{"lean", "general", "baked"} {
				server.Set(key, state)
				if isTicked {
					if ttl := tickedStateTTL(state, unit, refill, capacity, now, margin); ttl > 0 {
						server.SetTTL(key, ttl)
					}
				}
			}
		}
		lean := []any{"eval", shared.source, 1, "lean", now, margin, unit, refill, capacity, cost}
		spec := "fuzz " + code + " " + strconv.FormatInt(unit, 10) + " " + strconv.FormatInt(refill, 10) + " " + strconv.FormatInt(capacity, 10)
		general := []any{"eval", scripts.byAlgorithm[alg].source, 1, "general", modeCharge, now, margin, spec, cost, 0}
		leanReply, leanErr := checkLeanMatchesDecide(t, server, client, lean, general)
		checkBakedMatchesLean(t, server, client, bakedLean(alg, margin, []int64{unit, refill, capacity}, true), cost, now, leanReply, leanErr)
	})
}

// canonicalInteger reports whether s is an integer as Redis writes one: 0, or digits
// without a leading zero, after an optional minus.
func canonicalInteger(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	return s == "0" || digits != "" && digits[0] != '0' && strings.Trim(digits, "0123456789") == ""
}

// tickedStateTTL is the TTL that the store's writes give a ticked state (a valid
// one: 0 otherwise) at now, as lua/ticked_write.lua computes it: until the first whole
// granule after the TAT, in ms rounded up, plus the margin. A key that a write left
// with a TTL that has run out by now would be gone; 0 then too.
func tickedStateTTL(state string, unit, refill, capacity, now, margin int64) time.Duration {
	units, err := strconv.ParseInt(state, 10, 64)
	if err != nil || !canonicalInteger(state) || units < 0 || units > 1<<52 {
		return 0
	}
	granule := tickedGranule(unit, refill, capacity)
	edge := units - units%granule + granule
	ms := (edge+refill-1)/refill + margin - now
	if ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// checkBakedMatchesLean runs a policy's own lean script (baked, with the caller's
// clock; nil when the numbers cannot be baked) on key "baked" after the shared lean
// script ran on key "lean" from the same state and answered lean or leanErr: both
// accept or reject alike, reply the same integers, and leave the same state with the
// same TTL.
func checkBakedMatchesLean(t *testing.T, server *miniredis.Miniredis, client *redis.Client, baked *script, cost, now int64, lean []int64, leanErr error) {
	t.Helper()
	if baked == nil {
		if leanErr == nil {
			t.Fatalf("the numbers were not baked, but the shared script accepted them: %v", lean)
		}
		return
	}
	reply, err := evalInts(client, true, []any{"eval", baked.source, 1, "baked", cost, now})
	if (err == nil) != (leanErr == nil) {
		t.Fatalf("baked: %v, lean: %v", err, leanErr)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "RATELIMIT") {
		t.Fatalf("baked: error %q is not the script's own", err)
	}
	if err == nil && !slices.Equal(reply, lean) {
		t.Fatalf("baked replied %v, lean %v", reply, lean)
	}
	bakedState, _ := server.Get("baked")
	leanState, _ := server.Get("lean")
	if bakedState != leanState || server.TTL("baked") != server.TTL("lean") {
		t.Fatalf("baked stored %q for %v, lean %q for %v", bakedState, server.TTL("baked"), leanState, server.TTL("lean"))
	}
}

// leanAsDecide is a lean script's reply (allowed remaining reset retry delay, trailing
// zeros left out) written as the decide script's for one policy at instant now, or
// the reply unchanged when it is of neither shape.
func leanAsDecide(reply []int64, now int64) []int64 {
	if !leanReplyLength(len(reply)) {
		return reply
	}
	var f [fieldsPerResult]int64
	copy(f[:], reply)
	return []int64{now, f[0], f[0], f[1], f[3], f[2], f[4]}
}

// checkLeanMatchesDecide runs a lean script's charge of key "lean" and the decide
// script's charge of key "general" (EVAL arguments) from the same state: both accept
// or reject alike (with errors of their own), reply the same integers, and leave the
// same state with the same TTL. It returns the lean script's answer, read as evalInts
// reads it.
func checkLeanMatchesDecide(t *testing.T, server *miniredis.Miniredis, client *redis.Client, lean, general []any) ([]int64, error) {
	t.Helper()
	leanReply, leanErr := evalInts(client, true, lean)
	want, generalErr := evalInts(client, false, general)
	if (leanErr == nil) != (generalErr == nil) {
		t.Fatalf("lean: %v, decide: %v", leanErr, generalErr)
	}
	if leanErr != nil {
		for _, err := range []error{leanErr, generalErr} {
			if !strings.HasPrefix(err.Error(), "RATELIMIT") {
				t.Fatalf("error %q is not the script's own", err)
			}
		}
	} else if !slices.Equal(leanAsDecide(leanReply, want[0]), want) {
		t.Fatalf("lean replied %v, decide %v", leanReply, want)
	}
	// Both keys held the same state: an error or a refusal must leave it as it was
	// (decide.lua writes nothing then), an admission store the same.
	leanState, _ := server.Get("lean")
	generalState, _ := server.Get("general")
	if leanState != generalState || server.TTL("lean") != server.TTL("general") {
		t.Fatalf("lean stored %q for %v, decide %q for %v (error %v)", leanState, server.TTL("lean"), generalState, server.TTL("general"), leanErr)
	}
	if leanErr != nil {
		return nil, leanErr
	}
	return leanReply, nil
}
