// Command servercost counts the instructions the Redis server spends per decision for
// each Redis implementation of package limiters, under valgrind's callgrind: a figure
// that, unlike decisions per second, does not move with the speed of a shared machine.
//
//	cd examples/benchmarks && go run ./cmd/servercost
//	go run ./cmd/servercost -match 'ratelimit-redis/gcra|redis_rate' -n 50000
//
// It starts redis-server under callgrind on a free loopback port (valgrind,
// callgrind_control and redis-server must be on PATH), and for each implementation and
// scenario (one hot key, or 10,000 per-user keys, from 64 goroutines) it makes the
// warm-up decisions, zeroes the counters, makes the measured decisions and divides the
// instructions counted meanwhile by them. Instructions in the kernel (the sockets) are
// not counted. Two reference rows are not limiters: one EVALSHA of `return 1`, and a
// script that calls TIME, GET and SET with constant arguments, which is all the Redis
// work an exact limiter that reads the server's clock cannot do without.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/limiters"
)

// goroutines is how many goroutines decide at once, as in the compare scenarios.
const goroutines = 64

// userKeys is the number of keys of the per-user scenario.
const userKeys = 10_000

func main() {
	n := flag.Int("n", 20_000, "measured decisions per implementation and scenario")
	warmup := flag.Int("warmup", 5_000, "decisions before the counters are zeroed")
	match := flag.String("match", `^(ratelimit-redis/|redis_rate|ulule|baseline|floor)`, "measure the implementations whose names match this regular expression")
	flag.Parse()
	filter, err := regexp.Compile(*match)
	if err != nil || *n < 1 || *warmup < 0 {
		fmt.Fprintln(os.Stderr, "servercost: want -n ≥ 1, -warmup ≥ 0 and a valid -match")
		os.Exit(2)
	}
	if err := run(os.Stdout, filter, *n, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "servercost:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, filter *regexp.Regexp, n, warmup int) error {
	srv, err := startServer()
	if err != nil {
		return err
	}
	defer srv.stop()
	impls := limiters.Redis()
	fmt.Fprintf(out, "Server instructions per decision (callgrind, %d decisions after %d, %d goroutines):\n\n", n, warmup, goroutines)
	fmt.Fprintln(out, "| implementation | one hot key | per-user keys |")
	fmt.Fprintln(out, "|---|---:|---:|")
	for i, impl := range impls {
		if !filter.MatchString(impl.Name) {
			continue
		}
		var cells [2]string
		for s, perUser := range []bool{false, true} {
			env := limiters.Env{RedisAddr: srv.addr, Prefix: fmt.Sprintf("sc%d-%d:", i, s), PoolSize: goroutines}
			ir, err := srv.measure(impl, env, perUser, n, warmup)
			if err != nil {
				return fmt.Errorf("%s: %w", impl.Name, err)
			}
			cells[s] = fmt.Sprintf("%.1fk", ir/1000)
		}
		fmt.Fprintf(out, "| %s | %s | %s |\n", impl.Name, cells[0], cells[1])
	}
	return nil
}

// server is redis-server under callgrind.
type server struct {
	cmd  *exec.Cmd
	addr string
	dir  string
}

func startServer() (*server, error) {
	for _, tool := range []string{"valgrind", "callgrind_control", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not on PATH", tool)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "servercost-")
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "valgrind.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+filepath.Join(dir, "callgrind.out.%p"),
		"redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if conn, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
			conn.Close()
			client := redis.NewClient(&redis.Options{Addr: s.addr})
			err := client.Ping(context.Background()).Err()
			client.Close()
			if err == nil {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill() // the log stays for a look
			_ = cmd.Wait()
			return nil, fmt.Errorf("redis-server under valgrind did not answer within a minute (see %s)", log.Name())
		}
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.dir)
}

// measure makes warmup decisions, then n counted ones, and returns the server's
// instructions per counted decision.
func (s *server) measure(impl limiters.Impl, env limiters.Env, perUser bool, n, warmup int) (float64, error) {
	l, err := impl.New(env, limiters.RedisThroughput)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	if err := decide(l, perUser, warmup); err != nil {
		return 0, err
	}
	pid := strconv.Itoa(s.cmd.Process.Pid)
	if err := exec.Command("callgrind_control", "-z", pid).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -z: %w", err)
	}
	if err := decide(l, perUser, n); err != nil {
		return 0, err
	}
	before, _ := filepath.Glob(filepath.Join(s.dir, "callgrind.out.*"))
	if err := exec.Command("callgrind_control", "-d", pid).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -d: %w", err)
	}
	ir, err := s.newDump(before)
	if err != nil {
		return 0, err
	}
	return float64(ir) / float64(n), nil
}

// decide makes n decisions from goroutines goroutines, on one key or on userKeys.
func decide(l limiters.Limiter, perUser bool, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			decider := l.Worker()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				key := "hot"
				if perUser {
					key = "user-" + strconv.FormatInt(i%userKeys, 10)
				}
				if _, err := decider(context.Background(), key); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// newDump waits for the dump that is not among before and reads its instruction count
// (its "summary:" line, as callgrind_annotate reports it).
func (s *server) newDump(before []string) (int64, error) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		after, _ := filepath.Glob(filepath.Join(s.dir, "callgrind.out.*"))
		for _, name := range after {
			if slices.Contains(before, name) {
				continue
			}
			data, err := os.ReadFile(name)
			if err != nil {
				return 0, err
			}
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "summary: "); ok {
					return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				}
			}
		}
	}
	return 0, errors.New("no new callgrind dump within 30 s")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
