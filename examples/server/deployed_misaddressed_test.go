package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestOneClusterNodeFailsTheStartSayingSo: -redis-addrs names one node of a
// 3-master Cluster (as a managed service's single "configuration endpoint" reads).
// One address is dialled as a standalone server, so every key another master
// serves is answered MOVED: the start must fail, and say that the address is a
// Cluster node and how to give it, rather than only "unexpected reply: MOVED 7629
// 127.0.0.1:32887", as it did before. The same address given twice (two seeds)
// starts, and decides on the Cluster.
func TestOneClusterNodeFailsTheStartSayingSo(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	node := cluster.Addrs()[0]
	cfg, err := parseFlags([]string{"-store", "redis", "-redis-addrs", node}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), hooks{summaryInterval: time.Hour})
	if err == nil {
		a.Close()
		t.Fatalf("the server started on one Cluster node %s as a standalone server", node)
	}
	if msg := err.Error(); !strings.Contains(msg, node) || !strings.Contains(msg, "Cluster node") || !strings.Contains(msg, "MOVED") {
		t.Fatalf("%q does not say that %s is a Cluster node", msg, node)
	}
	t.Logf("the start failed: %v", err)

	cfg, err = parseFlags([]string{"-store", "redis", "-redis-addrs", node + "," + node}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err = newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), hooks{summaryInterval: time.Hour})
	if err != nil {
		t.Fatalf("the one node given twice: %v", err)
	}
	a.Close()
}

// TestSentinelAddressFailsTheStartSayingSo: -redis-addrs names a Sentinel, which
// answers every script "unknown command": the start fails, and says that the
// address does not run the limiter's commands and what to give instead, rather than
// only the Sentinel's "unknown command 'evalsha'".
func TestSentinelAddressFailsTheStartSayingSo(t *testing.T) {
	master := redistest.StartServer(t)
	sentinel := redistest.StartSentinel(t, master, "limiter", 5*time.Second)
	cfg, err := parseFlags([]string{"-store", "redis", "-redis-addrs", sentinel.Addr}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), hooks{summaryInterval: time.Hour})
	if err == nil {
		a.Close()
		t.Fatalf("the server started on the Sentinel %s", sentinel.Addr)
	}
	if msg := err.Error(); !strings.Contains(msg, sentinel.Addr) || !strings.Contains(msg, "a Sentinel") || !strings.Contains(msg, "master's address") {
		t.Fatalf("%q does not say that %s may be a Sentinel and to give a master's address", msg, sentinel.Addr)
	}
	t.Logf("the start failed: %v", err)
}
