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
// its configuration in tb.TempDir(), and stops it when tb ends. The Sentinel holds
// the master down, and fails over to a replica, once it has not answered for
// downAfter. It returns when the Sentinel reports master's address for name. It skips
// tb when redis-server is missing (see Require).
func StartSentinel(tb testing.TB, master *Server, name string, downAfter time.Duration) *Server {
	tb.Helper()
	path := Require(tb)
	s, err := NewSentinel(path, tb.TempDir(), master, name, downAfter)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Stop() })
	return s
}

// NewSentinel starts redis-server in Sentinel mode on a free loopback port, with its
// configuration in dir, monitoring master under name (quorum 1, so this one Sentinel
// fails over alone) with down-after-milliseconds downAfter. The caller must Stop it.
func NewSentinel(path, dir string, master *Server, name string, downAfter time.Duration) (*Server, error) {
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
		"sentinel monitor %s %s %s 1\nsentinel down-after-milliseconds %s %d\n",
		sentinelPort, dir, name, host, port, name, downAfter.Milliseconds())
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(sentinelPort)), path: path, dir: dir, args: []string{conf, "--sentinel"}}
	if err := s.start(); err != nil {
		return nil, err
	}
	if err := s.WaitMaster(name, master.Addr); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// WaitMaster waits, for up to 15 s, until the Sentinel s reports addr as the master
// of name: after a failover, the replica it promoted.
func (s *Server) WaitMaster(name, addr string) error {
	client := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var got []string
	var err error
	if poll(ctx, func(ctx context.Context) bool {
		got, err = client.GetMasterAddrByName(ctx, name).Result()
		return err == nil && len(got) == 2 && net.JoinHostPort(got[0], got[1]) == addr
	}) {
		return nil
	}
	return fmt.Errorf("redistest: sentinel on %s does not report master %s for %q: %v %v", s.Addr, addr, name, got, err)
}

// WaitReplica waits, for up to 15 s, until the Sentinel s knows replica as a healthy
// replica of name, one it could promote. A Sentinel learns of replicas from the
// master's INFO, every 10 s once it runs.
func (s *Server) WaitReplica(name string, replica *Server) error {
	client := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var replicas []map[string]string
	var err error
	if poll(ctx, func(ctx context.Context) bool {
		replicas, err = client.Replicas(ctx, name).Result()
		for _, r := range replicas {
			if net.JoinHostPort(r["ip"], r["port"]) == replica.Addr && r["flags"] == "slave" && r["master-link-status"] == "ok" {
				return true
			}
		}
		return false
	}) {
		return nil
	}
	return fmt.Errorf("redistest: sentinel on %s does not know %s as a replica of %q: %v %v", s.Addr, replica.Addr, name, replicas, err)
}
