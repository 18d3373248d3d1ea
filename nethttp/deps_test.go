package nethttp_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoFrameworkDependencies keeps gin and echo out of the engine and of this
// adapter: net/http users must not pull them in.
func TestNoFrameworkDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/go-ratelimit/ratelimit/nethttp", "github.com/go-ratelimit/ratelimit/core/httplimit").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "gin-gonic") || strings.Contains(dep, "labstack/echo") || strings.Contains(dep, "go-chi") {
			t.Errorf("nethttp depends on %s", dep)
		}
	}
}
