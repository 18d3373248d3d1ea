package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The recipe of testdata/README.md that turns an nginx log of "$msec
// $remote_addr" into a trace gives the times to the millisecond, whichever awk
// runs it (mawk, Debian's and Ubuntu's default, prints %d as at most 2^31-1).
func TestTraceRecipeOfTheTestdataREADME(t *testing.T) {
	for _, tool := range []string{"sh", "awk", "sort"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s to run the recipe with: %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../../testdata/README.md")
	if err != nil {
		t.Fatal(err)
	}
	recipe := traceRecipe(t, string(readme))
	dir := t.TempDir()
	logPath, tracePath := filepath.Join(dir, "access.log"), filepath.Join(dir, "mine.csv")
	log := "1795165201.999 203.0.113.9\n1795165201.057 2001:db8::1\n1795165202.000 203.0.113.9\n"
	if err := os.WriteFile(logPath, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	recipe = strings.Replace(recipe, "access.log", logPath, 1)
	recipe = strings.Replace(recipe, "testdata/traces/mine.csv", tracePath, 1)
	if out, err := exec.Command("sh", "-c", recipe).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", recipe, err, out)
	}
	trace, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	want := "t_ms,key,cost\n1795165201057,2001:db8::1,1\n1795165201999,203.0.113.9,1\n1795165202000,203.0.113.9,1\n"
	if string(trace) != want {
		t.Fatalf("the recipe made\n%s\nwant\n%s", trace, want)
	}
	if err := run(context.Background(), nil, bytes.NewReader(trace), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("the recipe's trace does not replay: %v", err)
	}
}

// traceRecipe returns the shell command of readme that starts with awk, its
// continued lines joined.
func traceRecipe(t *testing.T, readme string) string {
	t.Helper()
	var command []string
	for _, line := range strings.Split(readme, "\n") {
		if len(command) == 0 && !strings.HasPrefix(line, "awk ") {
			continue
		}
		command = append(command, strings.TrimSuffix(line, "\\"))
		if !strings.HasSuffix(line, "\\") {
			return strings.Join(command, " ")
		}
	}
	t.Fatal("testdata/README.md has no command starting with awk")
	return ""
}
