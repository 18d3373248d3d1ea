package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartSentinel starts a Redis Sentinel for tb that monitors master under name, with
// its configuration in tb.TempDir(), and stops it when tb ends. It returns when the
// Sentinel reports master's address for name. It skips tb when redis-server is
// missing (see Require).
func StartSentinel(tb testing.TB, master *Server, name string) *Server {
	tb.Helper()
	path := Require(tb)
	s, err := NewSentinel(path, tb.TempDir(), master, name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Stop() })
	return s
}

// NewSentinel starts redis-server in Sentinel mode on a free loopback port, with its
// configuration in dir, monitoring master under name (quorum 1). The caller must Stop it.
func NewSentinel(path, dir string, master *Server, name string) (*Server, error) {
	host, port, err := net.SplitHostPort(master.Addr)
	if err != nil {
		return nil, fmt.Errorf("redistest: master address: %w", err)
	}
	sentinelPort, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile redis.log\n"+
		"sentinel monitor %s %s %s 1\nsentinel down-after-milliseconds %s 5000\n",
		sentinelPort, dir, name, host, port, name)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(sentinelPort)), path: path, dir: dir, args: []string{conf, "--sentinel"}}
	if err := s.start(); err != nil {
		return nil, err
	}
	if err := s.waitMaster(name, master.Addr); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitMaster waits until the Sentinel reports addr as the master of name.
func (s *Server) waitMaster(name, addr string) error {
	client := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer client.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		got, err := client.GetMasterAddrByName(ctx, name).Result()
		cancel()
		if err == nil && len(got) == 2 && net.JoinHostPort(got[0], got[1]) == addr {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: sentinel on %s does not report master %s for %q: %v %v", s.Addr, addr, name, got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
