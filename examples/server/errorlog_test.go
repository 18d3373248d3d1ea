package main

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A handler's panic, which net/http recovers and writes to the server's ErrorLog,
// reaches the log at error, without the client's address: at debug, as the errors a
// client can cause are, an operator running at info never saw it.
func TestHandlerPanicIsLoggedAtError(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := newHTTPServer(cfg, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), logger)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	if resp, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
		resp.Body.Close()
	}
	// net/http writes the line before it closes the connection; wait for it all the same.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "boom") && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	got := logs.String()
	if !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "panic serving") || !strings.Contains(got, "boom") {
		t.Fatalf("the log at info after a handler's panic:\n%s\nwant an error naming the panic", got)
	}
	if strings.Contains(got, "127.0.0.1") {
		t.Fatalf("the log at info after a handler's panic:\n%s\nwant no client address above debug", got)
	}

	var clientErrors bytes.Buffer
	serverErrorLog(slog.New(slog.NewTextHandler(&clientErrors, &slog.HandlerOptions{Level: slog.LevelInfo}))).
		Print("http: TLS handshake error from 192.0.2.1:1234: EOF")
	if clientErrors.Len() != 0 {
		t.Fatalf("a client's error at info: %s, want it at debug", clientErrors.String())
	}
}
