package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startTimeout bounds how long a server may take to answer PING after starting.
const startTimeout = 15 * time.Second

// Server is one redis-server process on a loopback port.
type Server struct {
	// Addr is the server's host:port.
	Addr string

	path string
	dir  string
	args []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// StartServer starts a standalone redis-server for tb, with its data in tb.TempDir(),
// and stops it when tb ends. extraArgs are passed to redis-server ("--maxmemory",
// "1mb", …). It skips tb when redis-server is missing (see Require).
func StartServer(tb testing.TB, extraArgs ...string) *Server {
	tb.Helper()
	path := Require(tb)
	s, err := Start(path, tb.TempDir(), extraArgs...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Stop() })
	return s
}

// Start starts redis-server (the binary at path) on a free loopback port with its data
// and log in dir, and returns when it answers PING. The caller must Stop it.
func Start(path, dir string, extraArgs ...string) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ { // a free port may be taken before the server binds it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), path: path, dir: dir}
		s.args = append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--logfile", "redis.log", "--save", "", "--appendonly", "no",
			"--protected-mode", "no", "--daemonize", "no",
		}, extraArgs...)
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// freePort finds a loopback port that is free, and whose cluster bus port (+10000) is
// free too.
func freePort() (int, error) {
	for attempt := 0; attempt < 50; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("redistest: no free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if port+10000 > 65535 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		l.Close()
		if err != nil {
			continue
		}
		bus.Close()
		return port, nil
	}
	return 0, errors.New("redistest: no free port pair")
}

// start runs the process and waits until it answers PING.
func (s *Server) start() error {
	cmd := exec.Command(s.path, s.args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(cmd.Process.Pid, done); err != nil {
		cmd.Process.Kill()
		<-done
		return err
	}
	return nil
}

// waitReady waits until the process pid answers on s.Addr. It asks INFO for the
// answering process's id: tests start servers in parallel, in several test binaries,
// and a process that lost the race for its port exits while the one that won answers
// there (a "standalone" server once answered CLUSTERDOWN, being another test's
// Cluster node).
func (s *Server) waitReady(pid int, exited <-chan struct{}) error {
	client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer client.Close()
	deadline := time.Now().Add(startTimeout)
	want := "process_id:" + strconv.Itoa(pid) + "\r\n"
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		info, err := client.Info(ctx, "server").Result()
		cancel()
		if err == nil && strings.Contains(info, want) {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("another process answers there")
		}
		select {
		case <-exited:
			return fmt.Errorf("redistest: redis-server on %s exited: %s", s.Addr, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on %s did not answer within %v: %v; %s", s.Addr, startTimeout, err, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "log: " + string(bytes.TrimSpace(b))
}

// NewClient returns a client of the server that honours ctx deadlines. The caller closes it.
func (s *Server) NewClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true})
}

// Dir is the server's working directory (data, configuration and redis.log).
func (s *Server) Dir() string { return s.dir }

func (s *Server) signal(sig os.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New("redistest: server not running")
	}
	select {
	case <-s.done:
		return errors.New("redistest: server has exited")
	default:
	}
	return s.cmd.Process.Signal(sig)
}

// Pause stops the process (SIGSTOP): it keeps its connections but answers nothing,
// like a server stuck in a long operation or behind a dead link.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

// Kill ends the process at once (SIGKILL), like a crash, and waits for it.
func (s *Server) Kill() error { return s.end(syscall.SIGKILL) }

// Stop ends the process (SIGTERM, resuming it first if paused) and waits for it. It is
// idempotent.
func (s *Server) Stop() error { return s.end(syscall.SIGTERM) }

func (s *Server) end(sig syscall.Signal) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	return nil
}

// Restart starts the server again on the same port and directory after Stop or Kill
// (it stops a running one first). Its data is gone unless it was persisted.
func (s *Server) Restart() error {
	s.Stop()
	var err error
	for attempt := 0; attempt < 20; attempt++ { // the port may linger briefly
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
