package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// core/, keyfuncs/ and nethttp/ must never depend on gin or echo, so that users of
// net/http and chi do not compile them in.
func TestFrameworkFreePackagesImportNoRouterFramework(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH, so the import graph cannot be listed")
	}
	out, err := exec.Command(goTool, "list", "-deps", "../core/...", "../keyfuncs/...", "../nethttp/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/gin-gonic/gin") || strings.HasPrefix(pkg, "github.com/labstack/echo") {
			t.Errorf("a framework-free package depends on %s", pkg)
		}
	}
}
