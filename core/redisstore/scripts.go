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
	core.GCRA:          {"fixedtime.lua", "gcra.lua"},
	core.LeakyBucket:   {"fixedtime.lua", "leakybucket.lua"},
	core.FixedWindow:   {"fixedwindow.lua"},
	core.SlidingWindow: {"slidingwindow.lua"},
	core.SlidingLog:    {"slidinglog.lua"},
	core.Concurrency:   {"concurrency.lua"},
}

// leanFiles are the Lua files of a lean script: its prologue, which depends on the
// arguments alone (quot.lua, then single.lua for the buckets or single_window.lua for
// the windows, then the instant: single_now.lua), and its body, which reads the state
// (single_state.lua; batch_state.lua in the batch form), runs the algorithm's load,
// step and commit inlined, writes (single_write.lua) and replies (single_reply.lua;
// batch_reply.lua in the batch form).
type leanFiles struct{ prologue, body []string }

// singleFiles are the lean scripts of one charge on one key (Store.Decide), without
// decide.lua's stack driver. Algorithms without one (the sliding log and the
// concurrency limiter) decide through decide.lua.
var singleFiles = map[core.Algorithm]leanFiles{
	core.TokenBucket:   {bucketPrologue, []string{"single_state.lua", "tokenbucket_single.lua", "single_write.lua", "single_reply.lua"}},
	core.GCRA:          {bucketPrologue, []string{"single_state.lua", "single_tat.lua", "gcra_single.lua", "single_write.lua", "single_reply.lua"}},
	core.LeakyBucket:   {bucketPrologue, []string{"single_state.lua", "single_tat.lua", "leakybucket_single.lua", "single_write.lua", "single_reply.lua"}},
	core.FixedWindow:   {windowPrologue, []string{"single_state.lua", "fixedwindow_single.lua", "single_write.lua", "single_reply.lua"}},
	core.SlidingWindow: {windowPrologue, []string{"single_state.lua", "slidingwindow_single.lua", "single_write.lua", "single_reply.lua"}},
}

// The prologues of the buckets' and the windows' lean scripts (see leanFiles).
var (
	bucketPrologue = []string{"quot.lua", "single.lua", "single_now.lua"}
	windowPrologue = []string{"quot.lua", "single_window.lua", "single_now.lua"}
)

// scripts holds the store's Lua scripts, each with its SHA-1 computed once. A decision
// whose policies share one algorithm runs that algorithm's script, which holds only
// what it needs; a stack of mixed algorithms runs the script that holds them all. A
// single charge runs the algorithm's lean script when it has one.
type scripts struct {
	byAlgorithm map[core.Algorithm]*script
	single      map[core.Algorithm]*script
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
	}
	for a, files := range singleFiles {
		batchBody := slices.Clone(files.body) // reads the state as a batch: batch_state.lua
		batchBody[slices.Index(batchBody, "single_state.lua")] = "batch_state.lua"
		batchBody[slices.Index(batchBody, "single_reply.lua")] = "batch_reply.lua" // always an array
		s.single[a] = newLeanScript(concat(files.prologue), concat(files.body), concat(batchBody))
	}
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
