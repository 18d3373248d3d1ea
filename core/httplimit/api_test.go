package httplimit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// publicAPI is every name httplimit exports: what an application writes when it
// configures limits. The engine's machinery for router adapters (Limiter,
// Ticket, Start, AdapterOption, WriteDenial, …) lives in core/httpengine; a name
// added here is a name every user reads in go doc, so it must be one they need.
var publicAPI = []string{
	// limits
	"Limit", "LimitFunc", "Limits", "PolicyFunc", "Stack",
	// options
	"Option", "SettleFunc", "WithAllowList", "WithCost", "WithCostFunc", "WithFields",
	"WithKeyFallback", "WithLogger", "WithObserver", "WithReleaseTimeout", "WithRouteCosts",
	"WithSettle", "WithShadow", "WithSkip",
	// fields
	"Fields", "IETFFields", "LegacyFields", "NoFields",
	// key fallbacks
	"ClientIPFallback", "FallbackIP", "FallbackKind", "FallbackRefuse", "FallbackSkip",
	"KeyFallback", "KeyFallbackObserver", "RefuseFallback", "SkipFallback",
	// observing
	"ErrorReason", "Event", "Observer", "ReasonCanceled", "ReasonCost", "ReasonKey",
	"ReasonOther", "ReasonPolicy", "ReasonStore", "Verdict", "VerdictAllowed",
	"VerdictDenied", "VerdictShadowDenied", "VerdictUncharged", "VerdictUnenforced",
	// answering
	"Denial", "ErrCostTooHigh", "ErrStore", "ErrUnidentified",
}

// TestPublicAPI fails when httplimit exports a name that publicAPI does not list,
// or no longer exports one it lists.
func TestPublicAPI(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					got = append(got, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							got = append(got, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								got = append(got, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(publicAPI))
	if !slices.Equal(got, want) {
		t.Errorf("httplimit exports\n %q\nwant\n %q", got, want)
	}
}
