package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// allRouters is every -router value: each end-to-end test runs against all of them.
var allRouters = []string{"nethttp", "chi", "gin", "echo"}

// testServer is the reference server running in process on a real listener, with
// its store on a virtual clock that only moves when a test moves it.
type testServer struct {
	url     string
	clock   *storetest.Clock
	logs    *syncBuffer
	handler http.Handler
	app     *app
	started chan struct{} // one value per export that started its work
}

// flushLogs writes the log summary of the requests so far, as the server does
// once per interval.
func (ts *testServer) flushLogs() { ts.app.logs.flush(time.Hour) }

// startServer builds the server from command-line args (plus -router) and serves
// it on 127.0.0.1. Everything is stopped when the test ends.
func startServer(t *testing.T, router string, args ...string) *testServer {
	t.Helper()
	cfg, err := parseFlags(append([]string{"-router", router}, args...), io.Discard)
	if err != nil {
		t.Fatalf("flags %q: %v", args, err)
	}
	ts := &testServer{clock: storetest.NewClock(), logs: &syncBuffer{}, started: make(chan struct{}, 64)}
	logger := slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: cfg.logLevel}))
	a, err := newApp(cfg, logger, hooks{clock: ts.clock.Now, exportStarted: func() { ts.started <- struct{}{} }, summaryInterval: time.Hour})
	if err != nil {
		t.Fatalf("newApp %q: %v", args, err)
	}
	srv := httptest.NewServer(a.handler)
	t.Cleanup(func() {
		srv.Close()
		_ = a.Close()
	})
	ts.url, ts.handler, ts.app = srv.URL, a.handler, a
	return ts
}

// client returns an HTTP client whose connections come from the local address
// ip (any of 127.0.0.0/8 works on Linux), so tests can play several clients.
func client(t *testing.T, ip string) *http.Client {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	// As many idle connections as the tests' goroutines per client, so that none
	// closes after each request (the default keeps 2).
	transport := &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 16}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport, Timeout: 20 * time.Second}
}

// response is what a test looks at in an answer.
type response struct {
	status int
	header http.Header
	body   string
}

// problem is the RFC 9457 body of a refusal.
type problem struct {
	Type       string   `json:"type"`
	Title      string   `json:"title"`
	Status     int      `json:"status"`
	Detail     string   `json:"detail"`
	RetryAfter int      `json:"retry_after"`
	Violated   []string `json:"violated_policies"`
}

func (r response) problem(t *testing.T) problem {
	t.Helper()
	var p problem
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatalf("status %d body %q is not a problem: %v", r.status, r.body, err)
	}
	return p
}

// do sends one request; headers are name, value pairs.
func do(t *testing.T, c *http.Client, method, target string, body url.Values, headers ...string) response {
	t.Helper()
	return doContext(t, context.Background(), c, method, target, body, headers...)
}

func doContext(t *testing.T, ctx context.Context, c *http.Client, method, target string, body url.Values, headers ...string) response {
	t.Helper()
	var reader io.Reader
	if body != nil {
		reader = strings.NewReader(body.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, target, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// serveLocal runs one request through the handler in process, from remoteAddr,
// for addresses a loopback connection cannot have (IPv6 clients).
func serveLocal(h http.Handler, method, target, remoteAddr string, headers ...string) response {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = remoteAddr
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return response{status: w.Code, header: w.Header(), body: w.Body.String()}
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent log writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
