package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestFlagsAreValidated(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-limit", "0"}, "-limit 0: want at least 1"},
		{[]string{"-limit", "-3"}, "-limit -3"},
		{[]string{"-period", "0s"}, "-period 0s: want a positive duration"},
		{[]string{"-burst", "0"}, "-burst 0: want at least 1"},
		{[]string{"-router", "gorilla"}, `-router "gorilla": want one of nethttp, chi, gin, echo`},
		{[]string{"-store", "etcd"}, `-store "etcd"`},
		{[]string{"-algorithm", "concurrency"}, `-algorithm "concurrency"`},
		{[]string{"-store", "redis"}, "-store redis needs -redis-addrs"},
		{[]string{"-redis-addrs", "127.0.0.1:6379"}, "-redis-addrs is only for -store redis"},
		{[]string{"-on-store-error", "ignore"}, `-on-store-error "ignore"`},
		{[]string{"-replicas", "0"}, "-replicas 0: want at least 1"},
		{[]string{"-replicas", "3"}, "-replicas is only for -store redis"},
		{[]string{"-trusted-proxies", "10.0.0.0/8,not-a-cidr"}, "-trusted-proxies"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-limit", "ten"}, "invalid value"},
		{[]string{"-store", "redis", "-redis-addrs", "garbage"}, `-redis-addrs "garbage": want host:port`},
		{[]string{"-store", "redis", "-redis-addrs", "10.0.0.5:6379,10.0.0.6"}, `-redis-addrs "10.0.0.6": want host:port`},
		{[]string{"-store", "redis", "-redis-addrs", "127.0.0.1:99999"}, `-redis-addrs "127.0.0.1:99999"`},
		{[]string{"-store", "redis", "-redis-addrs", "127.0.0.1:"}, `-redis-addrs "127.0.0.1:"`},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error containing %q", tt.args, err, tt.want)
		}
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// A flag error and the usage go to stderr: stdout is the log stream, which a
// collector may parse line by line.
func TestFlagErrorsStayOutOfTheLogStream(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-limit", "ten"}, &stdout, &stderr)
	if err == nil || stdout.Len() != 0 || !strings.Contains(stderr.String(), "Usage of server") {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
}

func TestConfigurationErrorsNameThePolicy(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-limit", "3"}, `/api/report costs 5, but policy "api" holds at most 3`},
		{[]string{"-limit", "10", "-burst", "4"}, `policy "api" holds at most 4`},
		{[]string{"-algorithm", "fixed_window", "-burst", "20"}, `"api": burst does not apply to fixed_window`},
		{[]string{"-period", "1500us"}, `"api": period must be a whole number of milliseconds`},
		// A leaky-bucket wait (up to 6 s here) or an export (up to 5 s) longer than the
		// write timeout: the request is charged, then cut off without an answer.
		{[]string{"-algorithm", "leaky_bucket", "-limit", "1", "-period", "1s", "-burst", "6", "-write-timeout", "3s"}, `-write-timeout 3s: a request may wait up to 6s for its slot of policy "api"`},
		{[]string{"-write-timeout", "5s"}, `-write-timeout 5s: /api/export works up to 5s`},
	}
	for _, tt := range tests {
		cfg, err := parseFlags(tt.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		_, err = newApp(cfg, slog.New(slog.DiscardHandler), hooks{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error containing %q", tt.args, err, tt.want)
		}
	}
}

func TestRunServesAndShutsDownGracefully(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-router", "nethttp", "-log-level", "debug"}, logs, io.Discard)
	}()

	addr := ""
	listening := regexp.MustCompile(`msg=listening addr=(\S+)`)
	for deadline := time.Now().Add(5 * time.Second); addr == ""; time.Sleep(5 * time.Millisecond) {
		if m := listening.FindStringSubmatch(logs.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server never said where it listens:\n%s", logs.String())
		}
	}
	c := client(t, "127.0.0.1")
	if r := do(t, c, http.MethodGet, "http://"+addr+"/healthz", nil); r.status != 200 || r.body != "ok\n" {
		t.Fatalf("healthz: %d %q", r.status, r.body)
	}
	// An export in flight when the shutdown starts is finished, not cut off.
	inFlight := make(chan response, 1)
	go func() { inFlight <- do(t, c, http.MethodGet, "http://"+addr+"/api/export?ms=300", nil) }()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "path=/api/export"); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the export was never decided:\n%s", logs.String())
		}
	}
	cancel()
	if r := <-inFlight; r.status != http.StatusOK {
		t.Fatalf("export in flight during shutdown: %d", r.status)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the shutdown")
	}
	if !strings.Contains(logs.String(), "msg=stopped") {
		t.Errorf("no graceful stop in the logs:\n%s", logs.String())
	}
}

func TestMetricsCountDecisions(t *testing.T) {
	srv := startServer(t, "chi", "-algorithm", "fixed_window", "-limit", "6", "-period", "1m")
	c := client(t, "127.0.0.1")
	for range 8 {
		do(t, c, http.MethodGet, srv.url+"/api/resource", nil)
	}
	for range 21 {
		do(t, c, http.MethodPost, srv.url+"/login", loginForm("bob", "x"))
	}
	m := do(t, c, http.MethodGet, srv.url+"/metrics", nil).body
	for _, want := range []string{
		`ratelimit_decisions_total{policy="api",result="allowed"} 6`,
		`ratelimit_decisions_total{policy="api",result="denied"} 2`,
		`ratelimit_decisions_total{policy="account",result="allowed"} 5`,
		`ratelimit_decisions_total{policy="account",result="denied"} 16`,
		`ratelimit_decisions_total{policy="ip",result="uncharged"} 16`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

func TestEmbeddedStore(t *testing.T) {
	srv := startServer(t, "echo", "-store", "embedded", "-algorithm", "sliding_log", "-limit", "6", "-period", "1m")
	c := client(t, "127.0.0.1")
	got := admittedOf(t, 9, func(int) response { return do(t, c, http.MethodGet, srv.url+"/api/resource", nil) })
	if got != 6 {
		t.Fatalf("embedded Redis admitted %d of 9, want 6", got)
	}
	srv.clock.Advance(time.Minute)
	if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil); r.status != http.StatusOK {
		t.Fatalf("a minute later: %d", r.status)
	}
}

func TestUnreachableRedisFailsClosedWith503(t *testing.T) {
	srv := startServer(t, "gin", "-store", "redis", "-redis-addrs", "127.0.0.1:1", "-on-store-error", "closed")
	c := client(t, "127.0.0.1")
	r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("with Redis down: %d %q %q", r.status, r.header.Get("Retry-After"), r.header.Get("Content-Type"))
	}
	if strings.Contains(r.body, "127.0.0.1") || strings.Contains(r.body, "refused") {
		t.Errorf("the body leaks the store error: %s", r.body)
	}
	if r := do(t, c, http.MethodGet, srv.url+"/healthz", nil); r.status != http.StatusOK {
		t.Errorf("healthz with Redis down: %d", r.status)
	}
	if !strings.Contains(srv.logs.String(), "level=ERROR") {
		t.Errorf("the store failure was not logged:\n%s", srv.logs.String())
	}
}

// DESIGN.md's default policy is 10/s with a burst of 20; given a limit, the burst
// defaults to it; window algorithms take no burst.
func TestDefaultBurst(t *testing.T) {
	cases := []struct {
		args  []string
		burst int64
	}{
		{nil, 20},
		{[]string{"-algorithm", "gcra"}, 20},
		{[]string{"-limit", "50"}, 0},
		{[]string{"-burst", "7"}, 7},
		{[]string{"-algorithm", "fixed_window"}, 0},
	}
	for _, c := range cases {
		cfg, err := parseFlags(c.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.burst != c.burst {
			t.Errorf("%q: burst %d, want %d (0: the limit)", c.args, cfg.burst, c.burst)
		}
	}
	srv := startServer(t, "nethttp")
	r := do(t, client(t, "127.0.0.1"), http.MethodGet, srv.url+"/api/resource", nil)
	if got := r.header.Get("RateLimit-Policy"); got != `"api";q=20;w=2` {
		t.Errorf("default RateLimit-Policy %q, want \"api\";q=20;w=2", got)
	}
}

// TestAddrIsValidatedWithTheOtherFlags: a malformed -addr used to be found only
// when the server listened, after the store was opened (a Redis store dialled
// and probed first), with an error that did not name the flag ("listen tcp:
// address 99999: invalid port"). It is now refused with the other flags, and a
// listen error names -addr.
func TestAddrIsValidatedWithTheOtherFlags(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"bad", `-addr "bad": want host:port`},
		{"127.0.0.1", `-addr "127.0.0.1": want host:port`},
		{"127.0.0.1:99999", `-addr "127.0.0.1:99999": want host:port`},
		{"127.0.0.1:-1", `-addr "127.0.0.1:-1": want host:port`},
		{"127.0.0.1:no-such-service", `-addr "127.0.0.1:no-such-service": want host:port`},
	} {
		if _, err := parseFlags([]string{"-addr", tt.addr}, io.Discard); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("-addr %q: %v, want an error containing %q", tt.addr, err, tt.want)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", ":8080", "[::1]:8080", "localhost:8080", "127.0.0.1:http"} {
		if _, err := parseFlags([]string{"-addr", addr}, io.Discard); err != nil {
			t.Errorf("-addr %q: %v", addr, err)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	err = run(context.Background(), []string{"-addr", busy.Addr().String()}, io.Discard, io.Discard)
	if want := "-addr " + busy.Addr().String() + ": listen tcp"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("-addr of a port in use: %v, want an error containing %q", err, want)
	}
}
