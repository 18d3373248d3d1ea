package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// update rewrites the sample logs under testdata/logs from sampleTraffic:
//
//	go test ./examples/simulate -run TestSampleLogsAreUpToDate -update
var update = flag.Bool("update", false, "rewrite testdata/logs from the generator")

const sampleLogs = "../../testdata/logs"

// sampleRequest is one request of the sample traffic.
type sampleRequest struct {
	at               time.Time // whole seconds: the combined format has no more
	addr             netip.Addr
	target, agent    string
	referer, user    string
	status, bodySize int
}

// sampleTraffic is ten minutes of made-up traffic to an API: four people using
// it from a browser, a scraper that fires three requests a second for 100 s,
// and a client that rotates its IPv6 address inside one /64 at two a second for
// a minute. It is deterministic: the same seed gives the same requests.
func sampleTraffic() []sampleRequest {
	rng := rand.New(rand.NewPCG(20, 26))
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	browser := "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"
	pages := []string{"/api/resource?id=", "/api/resource?id=", "/api/resource?id=", "/api/report?month=", "/static/app.js?v="}
	var requests []sampleRequest
	people := []struct{ addr, user string }{
		{"198.51.100.7", "alice"}, {"198.51.100.23", "-"}, {"192.0.2.140", "bob"}, {"2001:db8:5:9:a1b2:c3d4:e5f6:1", "-"},
	}
	for _, p := range people {
		for at := time.Duration(rng.IntN(8)) * time.Second; at < 10*time.Minute; at += time.Duration(2+rng.IntN(12)) * time.Second {
			page := pages[rng.IntN(len(pages))]
			requests = append(requests, sampleRequest{at: start.Add(at), addr: netip.MustParseAddr(p.addr),
				target: fmt.Sprint(page, rng.IntN(500)), agent: browser, referer: "https://app.example.com/",
				user: p.user, status: 200, bodySize: 300 + rng.IntN(4000)})
		}
	}
	scraper := netip.MustParseAddr("203.0.113.66")
	for s := 150; s < 250; s++ {
		for range 3 {
			requests = append(requests, sampleRequest{at: start.Add(time.Duration(s) * time.Second), addr: scraper,
				target: fmt.Sprint("/api/resource?id=", rng.IntN(100000)), agent: "python-requests/2.32.3",
				referer: "-", user: "-", status: 200, bodySize: 512})
		}
	}
	for s := 420; s < 480; s++ {
		for range 2 {
			var low [8]byte
			for i := range low {
				low[i] = byte(rng.IntN(256))
			}
			addr := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0xab, 0xcd, 0x00, 0x12,
				low[0], low[1], low[2], low[3], low[4], low[5], low[6], low[7]})
			requests = append(requests, sampleRequest{at: start.Add(time.Duration(s) * time.Second), addr: addr,
				target: "/login", agent: "Go-http-client/1.1", referer: "-", user: "-", status: 401, bodySize: 97})
		}
	}
	slices.SortStableFunc(requests, func(a, b sampleRequest) int { return a.at.Compare(b.at) })
	return requests
}

// sampleKey is the -key ip key of a sample request, as the CSV trace holds it.
func sampleKey(r sampleRequest) string {
	if r.addr.Is4() {
		return "ip:" + r.addr.String()
	}
	return "ip6:" + netip.PrefixFrom(r.addr, 64).Masked().String()
}

// renderSampleLogs writes the sample traffic as a combined log (in a +01:00
// zone, as a server in Paris would log it), as JSON lines (UTC, nginx's
// variable names) and as the simulator's CSV trace keyed by IP.
func renderSampleLogs() (combined, jsonl, csv []byte) {
	var c, j, t bytes.Buffer
	paris := time.FixedZone("CET", 3600)
	t.WriteString("t_ms,key,cost\n")
	for _, r := range sampleTraffic() {
		request := "GET " + r.target + " HTTP/1.1"
		if r.target == "/login" {
			request = "POST /login HTTP/1.1"
		}
		fmt.Fprintf(&c, "%s - %s [%s] %q %d %d %q %q\n", r.addr, r.user, r.at.In(paris).Format(combinedTimeLayout),
			request, r.status, r.bodySize, r.referer, r.agent)
		line, _ := json.Marshal(struct {
			Time       string `json:"time"`
			RemoteAddr string `json:"remote_addr"`
			RemoteUser string `json:"remote_user,omitempty"`
			Request    string `json:"request"`
			Status     int    `json:"status"`
			BodyBytes  int    `json:"body_bytes_sent"`
			Referer    string `json:"http_referer"`
			UserAgent  string `json:"http_user_agent"`
		}{r.at.UTC().Format(time.RFC3339), r.addr.String(), map[bool]string{true: "", false: r.user}[r.user == "-"],
			request, r.status, r.bodySize, r.referer, r.agent})
		j.Write(line)
		j.WriteByte('\n')
		fmt.Fprintf(&t, "%d,%s,1\n", r.at.UnixMilli(), sampleKey(r))
	}
	return c.Bytes(), j.Bytes(), t.Bytes()
}

// The committed sample logs are what the generator makes, so that they cannot
// drift apart from each other or from the code that explains them.
func TestSampleLogsAreUpToDate(t *testing.T) {
	combined, jsonl, csv := renderSampleLogs()
	files := map[string][]byte{"access.log": combined, "access.jsonl": jsonl, "access.csv": csv}
	for name, want := range files {
		path := filepath.Join(sampleLogs, name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v; make it with go test ./examples/simulate -run TestSampleLogsAreUpToDate -update", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output; rewrite it with -update", path)
		}
	}
}
