package redisstore

import (
	"strconv"
	"testing"

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
	} {
		f.Add(seed.alg, seed.limit, seed.period, seed.cost, seed.now, seed.margin, seed.state)
	}
	server, client := newFuzzRedis(f)
	scripts := loadScripts()
	f.Fuzz(func(t *testing.T, algIndex int, limit, period, cost, now, margin int64, state string) {
		server.FlushAll()
		alg := windowAlgorithms[uint(algIndex)%uint(len(windowAlgorithms))]
		if state != "" {
			server.Set("lean", state)
			server.Set("general", state)
			server.Set("baked", state)
		}
		lean := []any{"eval", scripts.single[alg].source, 1, "lean", now, margin, limit, period, cost}
		spec := "fuzz " + algorithmCode(alg) + " " + strconv.FormatInt(limit, 10) + " " + strconv.FormatInt(period, 10)
		general := []any{"eval", scripts.byAlgorithm[alg].source, 1, "general", modeCharge, now, margin, spec, cost, 0}
		leanReply, leanErr := checkLeanMatchesDecide(t, server, client, lean, general)
		checkBakedMatchesLean(t, server, client, bakedLean(alg, margin, []int64{limit, period}, true), cost, now, leanReply, leanErr)
	})
}
