package redisstore

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// windowAlgorithms are the window algorithms with a lean single-charge script, in the
// order the fuzz tests number them.
var windowAlgorithms = []core.Algorithm{core.FixedWindow, core.SlidingWindow}

// FuzzSingleWindowMatchesDecide charges one key with the lean window script and with
// the decide script from the same stored state: both must accept or reject alike,
// reply the same integers, and leave the same state with the same TTL.
func FuzzSingleWindowMatchesDecide(f *testing.F) {
	const t0 = 1767225600000 // a multiple of every period below
	w := func(ms int64) string { return strconv.FormatInt((t0+ms)/1000, 10) }
	c := func(ms, count int64) string { return strconv.FormatInt((t0+ms)/1000*16+count, 10) }
	for _, seed := range []struct {
		alg                 int // 0 fixed window, 1 sliding window
		limit, period, cost int64
		now, margin         int64
		state               string
	}{
		{0, 10, 1000, 1, t0, 1000, ""},
		{0, 10, 1000, 1, t0 + 500, 0, w(0) + " 9"},
		{0, 10, 1000, 2, t0 + 500, 0, w(0) + " 9"},
		{0, 10, 1000, 2, t0 + 500, 0, w(-1000) + " 10"},
		{0, 10, 1000, 2, t0 + 500, 0, w(5000) + " 3"}, // the clock behind the stored window
		{0, 10, 1000, 10, t0 + 999, 7, w(0) + " 0"},
		{0, 10, 1000, 1, t0, 0, w(0) + " 11"},
		{0, 10, 1000, 1, t0, 0, "x y"},
		{0, 1000000000, 86400000, 1000000000, 1<<50 - 1, 31622400000, ""},
		{1, 10, 1000, 1, t0, 1000, ""},
		{1, 10, 1000, 1, t0 + 250, 0, w(0) + " 4 8"},
		{1, 10, 1000, 3, t0 + 250, 0, w(0) + " 4 8"},
		{1, 10, 1000, 3, t0 + 250, 0, w(-1000) + " 8 2"},
		{1, 10, 1000, 3, t0 + 250, 0, w(-2000) + " 8 2"},
		{1, 10, 1000, 5, t0 + 999, 0, w(0) + " 9 10"},
		{1, 10, 1000, 10, t0 + 1, 0, w(0) + " 0 10"},
		{1, 10, 1000, 1, t0 + 250, 0, w(3000) + " 4 8"}, // the clock behind the stored window
		{1, 7, 3, 2, t0 + 2, 5, w(0) + " 3 7"},
		{1, 10, 1000, 1, t0, 0, w(0) + " 11 0"},
		{1, 10, 1000, 1, t0, 0, "1 2"},
		{1, 1000000000, 86400000, 1, t0 + 86399999, 0, w(0) + " 999999999 1000000000"},
		{1, 10, 1000, 0, t0, 0, ""},
		{1, 10, 1000, 11, t0, 0, ""},
		{0, 0, 1000, 1, t0, 0, ""},
		// counted states (lua/counted.lua): window × stride + count, a stride of 16 for a limit of 10
		{0, 10, 1000, 1, t0 + 500, 0, c(0, 9)},
		{0, 10, 1000, 2, t0 + 500, 0, c(0, 9)},
		{0, 10, 1000, 2, t0 + 500, 0, c(-1000, 10)},
		{0, 10, 1000, 2, t0 + 500, 0, c(5000, 3)}, // the clock behind the stored window
		{0, 10, 1000, 10, t0 + 999, 7, c(0, 0)},
		{0, 10, 1000, 1, t0, 0, c(0, 11)},
		{0, 10, 1000, 1, t0, 0, "0"},
		{0, 10, 1000, 1, 500, 0, "0"}, // the first window, where a missing key counts as "0"
		{0, 10, 1000, 1, 500, 0, "3"},
		{0, 10, 1000, 1, t0, 0, "-16"},
		{0, 10, 1000, 1, t0, 0, "9007199254740960"},
		{0, 10, 1000, 1, t0, 0, "99999999999999999999"},
		{0, 1, 1, 1, t0, 0, strconv.FormatInt(t0*2, 10)},
		{0, 1, 1, 1, 1 << 49, 0, ""},
		{0, 1 << 20, 1000, 1, t0, 0, ""},
		{0, 1<<20 - 1, 1000, 1 << 19, t0, 0, c(0, 1<<19)},
	} {
		f.Add(seed.alg, seed.limit, seed.period, seed.cost, seed.now, seed.margin, seed.state)
	}
	server, client := newFuzzRedis(f)
	scripts := loadScripts()
	f.Fuzz(func(t *testing.T, algIndex int, limit, period, cost, now, margin int64, state string) {
		server.FlushAll()
		alg := windowAlgorithms[uint(algIndex)%uint(len(windowAlgorithms))]
		shared := scripts.single[alg]
		stride := int64(0)
		if alg == core.FixedWindow {
			stride = countedStride(limit, period)
		}
		if stride != 0 {
			shared = scripts.counted
			if _, err := strconv.Atoi(state); err == nil && !canonicalInteger(state) {
				t.Skip("miniredis's INCRBY reads integers as strconv.Atoi does (a sign, leading zeros), Redis's INCRBY and the decide script only canonical digits; the store never writes such text")
			}
			if value, err := strconv.ParseInt(state, 10, 64); err == nil && value >= 0 && (value/stride+1)*period+margin-now > int64(math.MaxInt64/time.Millisecond) {
				t.Skip("the state's window ends more than 292 years after now: miniredis keeps a TTL as a time.Duration, which cannot hold it (Redis can)")
			}
		}
		if state != "" {
			for _, key := range []string{"lean", "general", "baked"} {
				server.Set(key, state)
				if stride == 0 {
					continue
				}
				if ttl := countedStateTTL(state, stride, period, now, margin); ttl > 0 {
					server.SetTTL(key, ttl)
				}
			}
		}
		lean := []any{"eval", shared.source, 1, "lean", now, margin, limit, period, cost}
		spec := "fuzz " + algorithmCode(alg) + " " + strconv.FormatInt(limit, 10) + " " + strconv.FormatInt(period, 10)
		general := []any{"eval", scripts.byAlgorithm[alg].source, 1, "general", modeCharge, now, margin, spec, cost, 0}
		leanReply, leanErr := checkLeanMatchesDecide(t, server, client, lean, general)
		checkBakedMatchesLean(t, server, client, bakedLean(alg, margin, []int64{limit, period}, true), cost, now, leanReply, leanErr)
	})
}

// countedStateTTL is the TTL that the store's writes give a counted state (a valid
// one: 0 otherwise) at now, as lua/fixedwindow_counted.lua and lua/fixedwindow.lua
// compute it: until its window ends, plus the margin. A key that a write left with a
// TTL that has run out by now would be gone; 0 then too.
func countedStateTTL(state string, stride, period, now, margin int64) time.Duration {
	value, err := strconv.ParseInt(state, 10, 64)
	if err != nil || !canonicalInteger(state) || value < 0 || value > 1<<53 {
		return 0
	}
	ms := (value/stride+1)*period + margin - now
	if ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}
