package redisstore

import (
	"embed"
	"slices"
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// algorithmFiles are the Lua files that implement each algorithm, after the helpers
// of common.lua.
var algorithmFiles = map[core.Algorithm][]string{
	core.TokenBucket:   {"tokenbucket.lua"},
	core.GCRA:          {"ticked.lua", "fixedtime.lua", "gcra.lua"},
	core.LeakyBucket:   {"ticked.lua", "fixedtime.lua", "leakybucket.lua"},
	core.FixedWindow:   {"counted.lua", "fixedwindow.lua"},
	core.SlidingWindow: {"slidingwindow.lua"},
	core.SlidingLog:    {"slidinglog.lua"},
	core.Concurrency:   {"concurrency.lua"},
}

// leanFiles are the Lua files of a lean script: its prologue, which depends on the
// arguments alone (quot.lua, then the arguments' files: single.lua for the buckets or
// single_window.lua for the windows, with ticked.lua and ticked_args.lua for ticked
// policies or counted.lua and counted_args.lua for counted ones; then the instant:
// single_now.lua, and ticked_now.lua or counted_now.lua), and its body, which reads
// the state (single_state.lua, batch_state.lua in the batch form; charge_in_place.lua
// for the ticked and counted ones), runs the algorithm's load, step and commit
// inlined, writes (single_write.lua; ticked_write.lua) and replies (single_reply.lua;
// batch_reply.lua in the batch form). args counts the arguments' files, which a
// policy's own script replaces (baked.go).
type leanFiles struct {
	prologue, body []string
	args           int
}

// singleFiles are the lean scripts of one charge on one key (Store.Decide), without
// decide.lua's stack driver. Algorithms without one (the sliding log and the
// concurrency limiter) decide through decide.lua.
var singleFiles = map[core.Algorithm]leanFiles{
	core.TokenBucket:   {bucketPrologue, []string{"single_state.lua", "tokenbucket_single.lua", "single_write.lua", "single_reply.lua"}, 1},
	core.GCRA:          {bucketPrologue, []string{"single_state.lua", "single_tat.lua", "gcra_single.lua", "single_write.lua", "single_reply.lua"}, 1},
	core.LeakyBucket:   {bucketPrologue, []string{"single_state.lua", "single_tat.lua", "leakybucket_single.lua", "single_write.lua", "single_reply.lua"}, 1},
	core.FixedWindow:   {windowPrologue, []string{"single_state.lua", "fixedwindow_single.lua", "single_write.lua", "single_reply.lua"}, 1},
	core.SlidingWindow: {windowPrologue, []string{"single_state.lua", "slidingwindow_single.lua", "single_write.lua", "single_reply.lua"}, 1},
}

// tickedFiles are the lean scripts of one charge on one key for the ticked policies of
// GCRA and the leaky bucket (see ticked), whose state INCRBY charges in place. Their
// batch form runs the same body: it reads no state that it could skip.
var tickedFiles = map[core.Algorithm]leanFiles{
	core.GCRA:        {tickedPrologue, []string{"charge_in_place.lua", "ticked_state.lua", "gcra_ticked.lua", "ticked_write.lua", "single_reply.lua"}, 3},
	core.LeakyBucket: {tickedPrologue, []string{"charge_in_place.lua", "ticked_state.lua", "leakybucket_ticked.lua", "ticked_write.lua", "single_reply.lua"}, 3},
}

// countedFiles is the lean script of one charge on one key for the counted policies
// of the fixed window (see countedStride), whose state INCRBY charges in place. Its
// batch form runs the same body.
var countedFiles = leanFiles{countedPrologue, []string{"charge_in_place.lua", "fixedwindow_counted.lua", "single_reply.lua"}, 3}

// The prologues of the buckets', the ticked buckets', the windows' and the counted
// fixed window's lean scripts (see leanFiles).
var (
	bucketPrologue  = []string{"quot.lua", "single.lua", "single_now.lua"}
	tickedPrologue  = []string{"quot.lua", "ticked.lua", "single.lua", "ticked_args.lua", "single_now.lua", "ticked_now.lua"}
	windowPrologue  = []string{"quot.lua", "single_window.lua", "single_now.lua"}
	countedPrologue = []string{"quot.lua", "counted.lua", "single_window.lua", "counted_args.lua", "single_now.lua", "counted_now.lua"}
)

// countedHorizon is the last instant (ms since the epoch, in the year 2109) at which
// every state of a counted policy stays an exact Lua number, as counted.lua checks.
const countedHorizon = 1 << 42

// countedStride is the stride of a fixed window policy's counted state
// (lua/counted.lua), window × stride + count: the smallest power of two above its
// limit; 0 when the policy is not counted, because its states until countedHorizon
// would not all lie below 2^53.
func countedStride(limit, period int64) int64 {
	if limit < 1 || period < 1 || limit >= 1<<53 {
		return 0
	}
	stride := int64(1)
	for stride <= limit {
		stride += stride
	}
	if stride > (1<<53)/(countedHorizon/period+2) { // (q + 2) × stride > 2^53
		return 0
	}
	return stride
}

// Most a ticked policy's refill and reach (capacity × unit) may be, as ticked.lua
// checks: every TAT until the year 2109 then fits below 2^52 units.
const (
	maxTickedRefill = 1024
	maxTickedReach  = 1 << 40
)

// ticked reports whether a bucket policy of GCRA or the leaky bucket with these numbers
// keeps its TAT as one integer of token units (lua/ticked.lua).
func ticked(alg core.Algorithm, unit, refill, capacity int64) bool {
	_, ok := tickedFiles[alg]
	return ok && refill >= 1 && refill <= maxTickedRefill && unit >= 1 && capacity >= 1 &&
		float64(capacity)*float64(unit) <= maxTickedReach
}

// tickedGranule is the granule of a ticked policy's TTL, in token units: the smallest
// power of two at least its reach or one second of refill, whichever is less, as
// ticked.lua computes it.
func tickedGranule(unit, refill, capacity int64) int64 {
	span := min(capacity*unit, 1000*refill)
	granule := int64(1)
	for granule < span {
		granule += granule
	}
	return granule
}

// scripts holds the store's Lua scripts, each with its SHA-1 computed once. A decision
// whose policies share one algorithm runs that algorithm's script, which holds only
// what it needs; a stack of mixed algorithms runs the script that holds them all. A
// single charge runs the algorithm's lean script when it has one.
type scripts struct {
	byAlgorithm map[core.Algorithm]*script
	single      map[core.Algorithm]*script
	ticked      map[core.Algorithm]*script // the shared lean scripts of ticked policies
	counted     *script                    // the shared lean script of counted fixed windows
	mixed       *script
	release     *script
}

// loadScripts joins the embedded Lua files into the store's scripts: quot.lua,
// common.lua, the algorithms' files, then the driver decide.lua; and the algorithm's
// lean files (singleFiles) for single charges.
func loadScripts() scripts {
	s := scripts{
		byAlgorithm: make(map[core.Algorithm]*script, len(core.Algorithms)),
		single:      make(map[core.Algorithm]*script, len(singleFiles)),
		ticked:      make(map[core.Algorithm]*script, len(tickedFiles)),
	}
	for a, files := range singleFiles {
		s.single[a] = newLeanFilesScript(files)
	}
	for a, files := range tickedFiles {
		s.ticked[a] = newLeanFilesScript(files)
	}
	s.counted = newLeanFilesScript(countedFiles)
	var all []string
	for _, a := range core.Algorithms {
		s.byAlgorithm[a] = newScript(join(algorithmFiles[a]))
		for _, f := range algorithmFiles[a] {
			if !contains(all, f) {
				all = append(all, f)
			}
		}
	}
	s.mixed = newScript(join(all))
	s.release = newScript(mustRead("release.lua"))
	return s
}

// newLeanFilesScript is the lean script of files. Its batch form reads the state as a
// batch does (batch_state.lua, which speculates) where the body reads it with
// single_state.lua, and always replies with an array (batch_reply.lua).
func newLeanFilesScript(files leanFiles) *script {
	batch := slices.Clone(files.body)
	state := slices.Index(batch, "single_state.lua")
	if state >= 0 {
		batch[state] = "batch_state.lua"
	}
	batch[slices.Index(batch, "single_reply.lua")] = "batch_reply.lua"
	return newLeanScript(concat(files.prologue), concat(files.body), concat(batch), state >= 0)
}

// leanFor is the shared lean script of policy p's single charges, nil when its
// algorithm has none.
func (s *scripts) leanFor(p *core.Policy) *script {
	alg := p.Algorithm()
	switch alg {
	case core.GCRA, core.LeakyBucket:
		if ticked(alg, p.TokenUnit(), p.RefillPerMilli(), p.Capacity()) {
			return s.ticked[alg]
		}
	case core.FixedWindow:
		if countedStride(p.Limit(), p.PeriodMillis()) != 0 {
			return s.counted
		}
	}
	return s.single[alg]
}

// decideFor is the decide script for reqs.
func (s *scripts) decideFor(reqs []core.Request) *script {
	a := reqs[0].Policy.Algorithm()
	for i := 1; i < len(reqs); i++ {
		if reqs[i].Policy.Algorithm() != a {
			return s.mixed
		}
	}
	return s.byAlgorithm[a]
}

func join(files []string) string {
	return concat(append(append([]string{"quot.lua", "common.lua"}, files...), "decide.lua"))
}

// concat joins embedded Lua files, in order, into one script's source.
func concat(files []string) string {
	var b strings.Builder
	for _, name := range files {
		b.WriteString(mustRead(name))
		b.WriteByte('\n')
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mustRead reads an embedded file. The files are compiled into the binary, so a
// failure is a build defect, caught by every test.
func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic("redisstore: embedded script missing: " + name)
	}
	return string(b)
}
