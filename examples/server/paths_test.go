package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// reportSpellings are request lines that may reach GET /api/report's handler
// under another spelling: each router decides which it serves. Sent as written,
// over a raw connection, so that no client cleans them first.
var reportSpellings = []string{
	"GET /api/report/ HTTP/1.1",
	"GET //api/report HTTP/1.1",
	"GET /api//report HTTP/1.1",
	"GET /api/./report HTTP/1.1",
	"GET /api/x/../report HTTP/1.1",
	"GET /api%2Freport HTTP/1.1",
	"GET /api/%72eport HTTP/1.1",
	"GET /%61pi/report HTTP/1.1",
	"GET /API/report HTTP/1.1",
	"GET /api/Report HTTP/1.1",
	"GET /api/report;x=1 HTTP/1.1",
	"GET /api/report?x=1 HTTP/1.1",
	"GET /api/report" + strings.Repeat("/a", 2000) + " HTTP/1.1",
	"GET http://127.0.0.1/api/report HTTP/1.1",
	"HEAD /api/report HTTP/1.1",
	"OPTIONS /api/report HTTP/1.1",
	"POST /api/report HTTP/1.1\r\nX-HTTP-Method-Override: GET\r\nContent-Length: 0",
	"get /api/report HTTP/1.1",
}

// TestReportSpellingsCostTheReportOrNothing: a spelling of /api/report that a
// router serves with the report's handler costs the report's 5, and one it
// answers itself (404, 405, a redirect) costs nothing of "api": no spelling
// reaches the report at the cost of a resource, or charges the client twice.
// What a spelling spent is read from the client's next canonical report.
func TestReportSpellingsCostTheReportOrNothing(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "40", "-period", "1m")
			for i, line := range reportSpellings {
				ip := fmt.Sprintf("127.0.3.%d", i+1)
				status, body := rawRequest(t, srv.url, ip, line)
				served := status == http.StatusOK && (body == "report\n" || strings.HasPrefix(line, "HEAD "))
				after := do(t, client(t, ip), http.MethodGet, srv.url+"/api/report", nil)
				spent := 40 - reportCost - remainingOf(after.header.Get("RateLimit"), "api")
				name, _, _ := strings.Cut(line, "\r\n")
				name = name[:min(len(name), 40)]
				if served && spent != reportCost || !served && spent != 0 {
					t.Errorf("%s: %d %q spent %d of \"api\"; want %d if it served the report, else 0", name, status, body, spent, reportCost)
				}
			}
		})
	}
}

// rawRequest sends line (a request line, and header lines after it) from the
// local address ip to the server at url, as written, and returns the answer's
// status and body.
func rawRequest(t *testing.T, url, ip, line string) (int, string) {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	conn, err := dialer.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, line+"\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(line, " ")
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%.40s: %v", line, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%.40s: reading the body: %v", line, err)
	}
	return resp.StatusCode, string(body)
}
