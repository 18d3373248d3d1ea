package redisstore

import (
	"embed"
	"strings"

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
// files of the algorithms it decides, then its driver:
// lua/stack.lua for stacks and single decisions, lua/batch.lua for batches. A script
// holds only the algorithms it needs, because every call runs the whole chunk (each
// function definition costs the server a closure per call); a stack of mixed
// algorithms runs the stack script that holds them all.
type scripts struct {
	stack   map[core.Algorithm]*script
	batch   map[core.Algorithm]*script
	mixed   *script // the stack script of every algorithm
	release *script // lua/release.lua, alone
}

func loadScripts() scripts {
	s := scripts{
		stack: make(map[core.Algorithm]*script, len(core.Algorithms)),
		batch: make(map[core.Algorithm]*script, len(core.Algorithms)),
	}
	all := []string{"common.lua", "instant.lua"}
	for _, a := range core.Algorithms {
		files := filesOf(a)
		s.stack[a] = newScript(concat(append(files, "stack.lua")...))
		s.batch[a] = newScript(concat(append(files, "batch.lua")...))
		all = append(all, algorithmFiles[a])
	}
	s.mixed = newScript(concat(append(all, "stack.lua")...))
	s.release = newScript(concat("release.lua"))
	return s
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
