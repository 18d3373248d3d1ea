package redisstore

import (
	"regexp"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// Lua statements that name locals ("local a, b = ...", "local function f") and that
// assign names ("a, b = ...", not "=="), at the start of a line.
var (
	luaLocals  = regexp.MustCompile(`(?m)^\s*local\s+(?:function\s+)?([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)`)
	luaAssigns = regexp.MustCompile(`(?m)^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=[^=]`)
)

// TestLeanBodiesNeverAssignPrologueLocals: a batch runs a lean script's body as a
// closure over its prologue's locals, once per decision (newBatchScript), so a body
// that assigned one of them would leak a decision's value into the decisions after
// it. Every lean body must keep what it changes in locals of its own.
func TestLeanBodiesNeverAssignPrologueLocals(t *testing.T) {
	all := map[string]leanFiles{"counted fixed window": countedFiles}
	for alg, files := range singleFiles {
		all[string(alg)] = files
	}
	for alg, files := range tickedFiles {
		all["ticked "+string(alg)] = files
	}
	// A policy's own script names these in bakedArgsLua instead of the arguments' files.
	baked := "margin unit refill capacity most granule limit period stride now cost_arg cost"
	for name, files := range all {
		prologue := map[string]bool{}
		for _, n := range strings.Fields(baked) {
			prologue[n] = true
		}
		for _, f := range files.prologue {
			for _, m := range luaLocals.FindAllStringSubmatch(mustRead(f), -1) {
				for _, n := range strings.Split(m[1], ",") {
					prologue[strings.TrimSpace(n)] = true
				}
			}
		}
		own := map[string]bool{}
		for _, f := range append(files.body, "batch_state.lua", "batch_reply.lua") {
			for _, line := range strings.Split(mustRead(f), "\n") {
				if m := luaLocals.FindStringSubmatch(line); m != nil {
					for _, n := range strings.Split(m[1], ",") {
						own[strings.TrimSpace(n)] = true
					}
					continue
				}
				if m := luaAssigns.FindStringSubmatch(line); m != nil {
					for _, n := range strings.Split(m[1], ",") {
						if n = strings.TrimSpace(n); prologue[n] && !own[n] {
							t.Errorf("%s: %s assigns the prologue's local %q: %s", name, f, n, strings.TrimSpace(line))
						}
					}
				}
			}
		}
	}
	if len(singleFiles) == 0 || len(tickedFiles) == 0 || singleFiles[core.FixedWindow].body == nil {
		t.Fatal("no lean scripts to check")
	}
}
