package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestGoRedisLinesGoToTheLogAtDebug: against a Redis that is not there, go-redis's
// failed dials reach the server's log stream at debug, not stderr beside it.
func TestGoRedisLinesGoToTheLogAtDebug(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	logs, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-store", "redis", "-redis-addrs", dead, "-log-level", "debug"}, logs, stderr)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "msg=go-redis"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no go-redis line in the log within 5 s:\n%s", logs.String())
		}
	}
	line := grepLines(logs.String(), "msg=go-redis")
	if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, "connection refused") {
		t.Errorf("go-redis lines: want a failed dial at debug, got:\n%s", line)
	}
	if stderr.String() != "" {
		t.Errorf("stderr: %q, want nothing", stderr.String())
	}
}
