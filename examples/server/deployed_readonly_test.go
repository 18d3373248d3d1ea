package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestReadOnlyReplicaFailsTheStart: -redis-addrs names a replica of a standalone
// master (an operator's slip: the wrong host of a pair). The replica answers every
// script READONLY, so the server can never write its state there. It must refuse
// to start, saying the address is a replica's, in every failure mode, rather than
// run for ever in that mode: before, it started with a warning that the store "did
// not answer", and answered every request unenforced (open: 143 of 143 over 3 s),
// 503 (closed: 143 of 143) or from per-replica local buckets (local), with nothing
// ever written to Redis.
func TestReadOnlyReplicaFailsTheStart(t *testing.T) {
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	for _, mode := range []string{"local", "open", "closed"} {
		cfg, err := parseFlags([]string{"-store", "redis", "-redis-addrs", replica.Addr, "-on-store-error", mode}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		logs := &syncBuffer{}
		a, err := newApp(cfg, slog.New(slog.NewTextHandler(logs, nil)), hooks{summaryInterval: time.Hour})
		if err == nil {
			a.Close()
			t.Fatalf("-on-store-error %s: the server started on the read-only replica %s; logs:\n%s", mode, replica.Addr, logs)
		}
		if msg := err.Error(); !strings.Contains(msg, replica.Addr) || !strings.Contains(msg, "read-only replica") || !strings.Contains(msg, "READONLY") {
			t.Fatalf("-on-store-error %s: %q does not say that %s is a read-only replica", mode, msg, replica.Addr)
		}
	}
	// The master itself starts.
	cfg, err := parseFlags([]string{"-store", "redis", "-redis-addrs", master.Addr}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), hooks{summaryInterval: time.Hour})
	if err != nil {
		t.Fatalf("on the master: %v", err)
	}
	a.Close()
}
