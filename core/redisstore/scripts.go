package redisstore

import (
	"embed"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// algorithmFiles is the Lua file of each algorithm (see lua/common.lua for what it
// defines).
var algorithmFiles = map[core.Algorithm]string{
	core.TokenBucket:   "tokenbucket.lua",
	core.GCRA:          "gcra.lua",
	core.LeakyBucket:   "leakybucket.lua",
	core.FixedWindow:   "fixedwindow.lua",
	core.SlidingWindow: "slidingwindow.lua",
	core.SlidingLog:    "slidinglog.lua",
	core.Concurrency:   "concurrency.lua",
}

// usesInstants is the algorithms whose files need lua/instant.lua before them.
var usesInstants = map[core.Algorithm]bool{core.GCRA: true, core.LeakyBucket: true}

// filesOf is what a script of algorithm a holds before its driver.
func filesOf(a core.Algorithm) []string {
	if usesInstants[a] {
		return []string{"common.lua", "instant.lua", algorithmFiles[a]}
	}
	return []string{"common.lua", algorithmFiles[a]}
}

// scripts holds the store's Lua scripts, each with its SHA-1 computed once. Each is
// lua/common.lua, lua/instant.lua where GCRA or the leaky bucket need it, then the
// files of the algorithms it decides, then its driver: lua/single.lua for a single
// decision (one script per policy, with the policy's numbers written in), lua/stack.lua
// for stacks, peeks, refunds and releases, lua/batch.lua for batches. A script holds
// only the algorithms it needs, because every call runs the whole chunk (each
// function definition costs the server a closure per call); a stack of mixed
// algorithms runs the stack script that holds them all.
type scripts struct {
	stack   map[core.Algorithm]*script
	batch   map[core.Algorithm]*script
	mixed   *script // the stack script of every algorithm
	singles *singleCache
}

// loadScripts builds the scripts of a store whose TTL margin is marginMs.
func loadScripts(marginMs int64) scripts {
	s := scripts{
		stack:   make(map[core.Algorithm]*script),
		batch:   make(map[core.Algorithm]*script),
		singles: &singleCache{marginMs: marginMs},
	}
	all := []string{"common.lua", "instant.lua"}
	for _, a := range core.Algorithms() {
		files := filesOf(a)
		s.stack[a] = newScript(concat(append(files, "stack.lua")...))
		s.batch[a] = newScript(concat(append(files, "batch.lua")...))
		all = append(all, algorithmFiles[a])
	}
	s.mixed = newScript(concat(append(all, "stack.lua")...))
	return s
}

// policyMark is where lua/single.lua takes its policy's algorithm and numbers and the
// store's TTL margin.
const policyMark = "${POLICY}"

// singleSource is the source of p's single-decision script for a store whose TTL
// margin is marginMs: its algorithm's files, then lua/single.lua with p's algorithm
// code and numbers written in place of policyMark, as a spec holds them (policySpec),
// with a 0 for a missing third number, and then the margin.
func singleSource(p *core.Policy, marginMs int64) string {
	fields := strings.Fields(policySpec(p))
	values := "'" + fields[0] + "'"
	for i := 1; i <= 3; i++ {
		number := "0"
		if i < len(fields) {
			number = fields[i]
		}
		values += ", " + number
	}
	values += ", " + strconv.FormatInt(marginMs, 10)
	driver := strings.Replace(mustRead("single.lua"), policyMark, values, 1)
	return concat(filesOf(p.Algorithm())...) + driver
}

// singleCache holds the single-decision scripts of the policies a store has seen, by
// policy ID. Beyond maxCachedPolicies (policies computed per request) a single
// decision runs the stack script instead.
type singleCache struct {
	marginMs int64    // the store's TTL margin, written into each script
	scripts  sync.Map // string -> *script
	size     atomic.Int64
}

// get is p's single-decision script, or nil when the cache is full.
func (c *singleCache) get(p *core.Policy) *script {
	if s, ok := c.scripts.Load(p.ID()); ok {
		return s.(*script)
	}
	if c.size.Load() >= maxCachedPolicies {
		return nil
	}
	s, loaded := c.scripts.LoadOrStore(p.ID(), newScript(singleSource(p, c.marginMs)))
	if !loaded {
		c.size.Add(1)
	}
	return s.(*script)
}

// stackFor is the stack script for reqs: their algorithm's, or the mixed one.
func (s *scripts) stackFor(reqs []core.Request) *script {
	a := reqs[0].Policy.Algorithm()
	for i := 1; i < len(reqs); i++ {
		if reqs[i].Policy.Algorithm() != a {
			return s.mixed
		}
	}
	return s.stack[a]
}

// concat joins embedded Lua files, in order, into one script's source.
func concat(files ...string) string {
	var b strings.Builder
	for _, name := range files {
		b.WriteString(mustRead(name))
		b.WriteByte('\n')
	}
	return b.String()
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
