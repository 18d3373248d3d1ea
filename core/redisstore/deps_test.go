package redisstore_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoEmbeddedServerDependencies keeps miniredis and its Lua interpreter out of
// programs that use a real Redis: only package embedded links them.
func TestNoEmbeddedServerDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped in -short mode")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH, so dependencies cannot be listed")
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.SplitSeq(string(out), "\n") {
		for _, banned := range []string{"github.com/alicebob/miniredis", "github.com/yuin/gopher-lua"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("redisstore depends on %s", dep)
			}
		}
	}
}
