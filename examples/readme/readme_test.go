package readme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMESnippetsAreCompiled holds every Go snippet of the README to code that
// compiles: the complete program to examples/chi/main.go, every other snippet to
// snippets_test.go. Each snippet's lines must appear there in order (spacing aside;
// the compiled code may add lines between them), so editing a snippet without its
// compiled twin, or the other way round, fails here.
func TestREADMESnippetsAreCompiled(t *testing.T) {
	readme := read(t, filepath.Join("..", "..", "README.md"))
	snippets := read(t, "snippets_test.go")
	program := read(t, filepath.Join("..", "chi", "main.go"))
	blocks := goBlocks(readme)
	if len(blocks) < 7 {
		t.Fatalf("found %d Go snippets in the README, want at least 7: is the parser still right?", len(blocks))
	}
	for i, block := range blocks {
		target, name := snippets, "snippets_test.go"
		if strings.HasPrefix(block, "package main") {
			target, name = program, "examples/chi/main.go"
		}
		if line, ok := inOrder(block, target); !ok {
			t.Errorf("README Go snippet %d is not in %s: from the line %q on.\nSnippet:\n%s", i+1, name, line, block)
		}
	}
}

// docs/composition.md shows the complete program of examples/chi/main.go: it had
// drifted from it (a login keyed without case folding, without RefuseFallback).
func TestCompositionProgramIsTheChiExample(t *testing.T) {
	program := read(t, filepath.Join("..", "chi", "main.go"))
	found := false
	for _, block := range goBlocks(read(t, filepath.Join("..", "..", "docs", "composition.md"))) {
		if !strings.HasPrefix(block, "package main") {
			continue
		}
		found = true
		if line, ok := inOrder(block, program); !ok {
			t.Errorf("composition.md's program is not examples/chi/main.go: from the line %q on", line)
		}
	}
	if !found {
		t.Fatal("composition.md has no complete program")
	}
}

// The check itself: a snippet whose line is missing, or out of order, is not found.
func TestInOrder(t *testing.T) {
	target := "a := 1\n\nb  :=  2 // two\nc := 3\n"
	for _, tc := range []struct {
		snippet string
		want    bool
	}{
		{"a := 1\nc := 3", true},
		{"b := 2 // two", true},
		{"c := 3\na := 1", false},
		{"a := 1\nd := 4", false},
	} {
		if _, got := inOrder(tc.snippet, target); got != tc.want {
			t.Errorf("inOrder(%q) = %v, want %v", tc.snippet, got, tc.want)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goBlocks returns the contents of the ```go fenced blocks of markdown.
func goBlocks(markdown string) []string {
	var blocks []string
	var current []string
	in := false
	for _, line := range strings.Split(markdown, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```go":
			in, current = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, strings.Join(current, "\n"))
		case in:
			current = append(current, line)
		}
	}
	return blocks
}

// inOrder reports whether every non-blank line of snippet appears in target, in
// order, comparing lines with their runs of spaces and tabs collapsed; when not, it
// returns the first line that was not found.
func inOrder(snippet, target string) (string, bool) {
	lines := normalized(target)
	next := 0
	for _, want := range normalized(snippet) {
		found := false
		for next < len(lines) {
			next++
			if lines[next-1] == want {
				found = true
				break
			}
		}
		if !found {
			return want, false
		}
	}
	return "", true
}

// normalized is text's non-blank lines with their runs of spaces and tabs collapsed.
func normalized(text string) []string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if fields := strings.Fields(line); len(fields) > 0 {
			lines = append(lines, strings.Join(fields, " "))
		}
	}
	return lines
}
