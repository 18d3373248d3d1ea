package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt from the nethttp router")

// goldenStep is one request of the golden sequence; advance moves the store's
// clock before it is sent.
type goldenStep struct {
	advance time.Duration
	method  string
	target  string
	form    url.Values
	headers []string
	peer    string
}

func goldenSequence() []goldenStep {
	const client, other = "192.0.2.10:40000", "198.51.100.20:40000"
	alice := url.Values{"username": {"alice"}, "password": {loginPassword}}
	steps := []goldenStep{
		{method: "GET", target: "/healthz", peer: client},
		{method: "GET", target: "/api/report", peer: client},
		{method: "GET", target: "/api/report", peer: client},
		{method: "GET", target: "/api/resource", peer: client},
		{method: "GET", target: "/api/report", peer: client, headers: []string{"X-API-Key", "k-123"}},
		{advance: 250 * time.Millisecond, method: "GET", target: "/api/resource", peer: client},
		{method: "GET", target: "/api/report", peer: client},
		{method: "GET", target: "/api/export?ms=0", peer: client},
	}
	for range 5 {
		steps = append(steps, goldenStep{method: "POST", target: "/login", form: alice, peer: other})
	}
	steps = append(steps,
		goldenStep{method: "POST", target: "/login", form: alice, peer: other},
		goldenStep{advance: 30 * time.Second, method: "POST", target: "/login", form: alice, peer: client},
		goldenStep{method: "POST", target: "/login", form: url.Values{"username": {"bob"}, "password": {"x"}}, peer: client},
		// An API key the server does not accept: 401, charged to the client address.
		goldenStep{method: "GET", target: "/api/resource", peer: other, headers: []string{"X-API-Key", "k-guess"}},
		// Another spelling of alice's account shares her (spent) budget.
		goldenStep{method: "POST", target: "/login", form: url.Values{"username": {"ALICE"}, "password": {loginPassword}}, peer: client},
		// A HEAD is limited and charged as its GET is, on every router.
		goldenStep{method: "HEAD", target: "/api/resource", peer: other},
		goldenStep{method: "GET", target: "/api/resource", peer: other},
	)
	return steps
}

// transcript runs the golden sequence through a fresh server on router and
// writes each answer's status, rate-limit fields, content type and body.
func transcript(t *testing.T, router string) string {
	t.Helper()
	srv := startServer(t, router, "-algorithm", "token_bucket", "-limit", "10", "-period", "1s", "-api-keys", "k-123")
	var b strings.Builder
	for i, step := range goldenSequence() {
		srv.clock.Advance(step.advance)
		var r *http.Request
		if step.form != nil {
			r = httptest.NewRequest(step.method, step.target, strings.NewReader(step.form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			r = httptest.NewRequest(step.method, step.target, nil)
		}
		r.RemoteAddr = step.peer
		for j := 0; j+1 < len(step.headers); j += 2 {
			r.Header.Set(step.headers[j], step.headers[j+1])
		}
		w := httptest.NewRecorder()
		srv.handler.ServeHTTP(w, r)
		fmt.Fprintf(&b, "## %d: %s %s from %s", i+1, step.method, step.target, step.peer)
		if step.advance > 0 {
			fmt.Fprintf(&b, " after +%v", step.advance)
		}
		fmt.Fprintf(&b, "\nstatus: %d\n", w.Code)
		for _, name := range []string{"RateLimit-Policy", "RateLimit", "Retry-After", "X-RateLimit-Limit", "Content-Type"} {
			if v := w.Header().Values(name); v != nil {
				fmt.Fprintf(&b, "%s: %s\n", name, strings.Join(v, " | "))
			}
		}
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(w.Body.String(), "\n"))
	}
	return b.String()
}

// TestGoldenAllRoutersAgree runs one sequence through all four routers: their
// rate-limit fields, refusals and bodies are byte-identical, and equal to
// testdata/golden.txt.
func TestGoldenAllRoutersAgree(t *testing.T) {
	path := filepath.Join("testdata", "golden.txt")
	reference := transcript(t, "nethttp")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(reference), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	if reference != string(golden) {
		t.Errorf("nethttp differs from %s:\n%s", path, firstDifference(string(golden), reference))
	}
	for _, router := range allRouters[1:] {
		if got := transcript(t, router); got != reference {
			t.Errorf("%s differs from nethttp:\n%s", router, firstDifference(reference, got))
		}
	}
}

// firstDifference shows the first line where got differs from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant %q\n got %q", i+1, wl, gl)
		}
	}
	return "(equal)"
}
