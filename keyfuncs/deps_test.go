package keyfuncs

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoFrameworkDependencies keeps keyfuncs usable without gin or echo.
func TestNoFrameworkDependencies(t *testing.T) {
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
		for _, banned := range []string{"github.com/gin-gonic/", "github.com/labstack/echo", "github.com/go-chi/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("keyfuncs depends on %s", dep)
			}
		}
	}
}
