package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/examples/benchmarks/harness"
	"github.com/go-ratelimit/ratelimit/examples/benchmarks/limiters"
)

// sample is one measurement.
type sample struct {
	nsPerOp, allocsPerOp, bytesPerOp float64
	// serverMicros is the redis-server's CPU time per decision, in µs (Redis only).
	serverMicros float64
	// clientMicros is this process's CPU time per decision, in µs (Redis only):
	// on a machine the client shares with the server, both draw on the same cores.
	clientMicros float64
	stats        harness.Stats
}

// series is every measurement of one implementation in one scenario.
type series struct {
	scenario  harness.Scenario
	index     int // of the implementation in its list
	name      string
	algorithm string
	ours      bool
	baseline  bool // not a limiter (limiters.Impl.Baseline)
	batched   bool // limiters.Impl.Batched
	samples   []sample
	err       error
}

func run(cfg config, out, log io.Writer) error {
	scenarios, err := harness.Scenarios()
	if err != nil {
		return err
	}
	redisAddr, stop, err := redisServer(cfg, log)
	if err != nil {
		return err
	}
	defer stop()

	start := time.Now().UTC()
	var all []*series
	bySeries := map[string]*series{}
	for round := range cfg.rounds {
		for _, sc := range scenarios {
			if !cfg.selected(sc.Name) || (sc.Kind == harness.KindRedis && redisAddr == "") {
				continue
			}
			fmt.Fprintf(log, "round %d/%d: %s\n", round+1, cfg.rounds, sc.Name)
			{
				for i, one := range rotate(measurements(sc, cfg), round) {
					key := sc.Name + "\x00" + one.name
					s := bySeries[key]
					if s == nil {
						s = &series{scenario: sc, index: one.index, name: one.name, algorithm: one.algorithm, ours: one.ours,
							baseline: one.baseline, batched: one.batched}
						bySeries[key] = s
					}
					if s.err != nil {
						continue
					}
					env := limiters.Env{RedisAddr: redisAddr, PoolSize: harness.RedisGoroutines,
						Prefix: fmt.Sprintf("cmp%d-%d-%d:", start.UnixNano(), round, i)}
					smp, err := one.measure(cfg, env)
					if err != nil {
						s.err = err
						fmt.Fprintf(log, "  %s: %v\n", one.name, err)
						continue
					}
					s.samples = append(s.samples, smp)
				}
			}
		}
	}
	for _, sc := range scenarios {
		for _, s := range bySeries {
			if s.scenario.Name == sc.Name {
				all = append(all, s)
			}
		}
	}
	order(all, scenarios)

	var overGrants []overGrantRow
	if cfg.selected("overgrant") {
		overGrants = overGrantAll(cfg, redisAddr, log)
	}
	writeReport(out, cfg, start, redisAddr != "" || !cfg.needsRedis(), all, overGrants)
	return nil
}

// measurement is one implementation of one scenario, ready to measure.
type measurement struct {
	index           int
	name, algorithm string
	ours            bool
	baseline        bool
	batched         bool
	measure         func(cfg config, env limiters.Env) (sample, error)
}

// measurements returns the implementations of sc's kind.
func measurements(sc harness.Scenario, cfg config) []measurement {
	var ms []measurement
	switch sc.Kind {
	case harness.KindMemory, harness.KindRedis:
		impls, policy := limiters.Memory(), limiters.Throughput
		benchtime := func(c config) time.Duration { return c.memoryTime }
		if sc.Kind == harness.KindRedis {
			impls, policy = limiters.Redis(), limiters.RedisThroughput
			benchtime = func(c config) time.Duration { return c.redisTime }
		}
		for i, impl := range impls {
			ms = append(ms, measurement{index: i, name: impl.Name, algorithm: impl.Algorithm, ours: impl.Ours,
				baseline: impl.Baseline, batched: impl.Batched,
				measure: func(cfg config, env limiters.Env) (sample, error) {
					l, err := impl.New(env, policy)
					if err != nil {
						return sample{}, err
					}
					defer l.Close()
					if err := harness.Warm(sc, l); err != nil {
						return sample{}, err
					}
					if sc.Kind != harness.KindRedis {
						return bench(benchtime(cfg), func(b *testing.B) harness.Stats { return harness.RunDecider(b, sc, l) })
					}
					// The server's CPU time per decision, over every run of the benchmark.
					ctx := context.Background()
					before, err := serverCPU(ctx, env.RedisAddr)
					if err != nil {
						return sample{}, err
					}
					clientBefore := processCPU()
					var decisions atomic.Int64
					counted := counting{Limiter: l, decisions: &decisions}
					smp, err := bench(benchtime(cfg), func(b *testing.B) harness.Stats { return harness.RunDecider(b, sc, counted) })
					if err != nil {
						return sample{}, err
					}
					clientAfter := processCPU()
					after, err := serverCPU(ctx, env.RedisAddr)
					if err != nil {
						return sample{}, err
					}
					smp.serverMicros = (after - before) * 1e6 / float64(max(1, decisions.Load()))
					smp.clientMicros = (clientAfter - clientBefore) * 1e6 / float64(max(1, decisions.Load()))
					return smp, nil
				}})
		}
	case harness.KindHTTP:
		handler := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		for i, mw := range limiters.Middlewares() {
			ms = append(ms, measurement{index: i, name: mw.Name, ours: mw.Ours,
				measure: func(cfg config, _ limiters.Env) (sample, error) {
					h, release, err := mw.Wrap(limiters.Throughput, handler)
					if err != nil {
						return sample{}, err
					}
					defer release()
					return bench(cfg.httpTime, func(b *testing.B) harness.Stats { return harness.RunHTTP(b, sc, h) })
				}})
		}
	}
	matched := ms[:0]
	for _, m := range ms {
		if cfg.match.MatchString(m.name) {
			matched = append(matched, m)
		}
	}
	return matched
}

// bench runs one testing.Benchmark of about d.
func bench(d time.Duration, f func(b *testing.B) harness.Stats) (sample, error) {
	if err := flag.Set("test.benchtime", d.String()); err != nil {
		return sample{}, err
	}
	var stats harness.Stats
	res := testing.Benchmark(func(b *testing.B) { stats = f(b) })
	if res.N == 0 {
		return sample{}, errors.New("the benchmark did not run")
	}
	n := float64(res.N)
	return sample{
		nsPerOp:     float64(res.T.Nanoseconds()) / n,
		allocsPerOp: float64(res.MemAllocs) / n,
		bytesPerOp:  float64(res.MemBytes) / n,
		stats:       stats,
	}, nil
}

// rotate starts round r at its r-th implementation, so no one always runs first.
func rotate(m []measurement, r int) []measurement {
	if len(m) == 0 {
		return m
	}
	r %= len(m)
	return append(append([]measurement{}, m[r:]...), m[:r]...)
}

// redisServer returns the address of the server to use: -redis, or one started here.
func redisServer(cfg config, log io.Writer) (string, func(), error) {
	if cfg.redisAddr != "" || !cfg.needsRedis() {
		return cfg.redisAddr, func() {}, nil
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		fmt.Fprintln(log, "redis-server is not on PATH: skipping the Redis scenarios (install it, or pass -redis host:port)")
		return "", func() {}, nil
	}
	dir, err := os.MkdirTemp("", "compare-redis-")
	if err != nil {
		return "", nil, err
	}
	srv, err := redistest.Start(path, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("starting redis-server: %w", err)
	}
	return srv.Addr, func() { _ = srv.Stop(); _ = os.RemoveAll(dir) }, nil
}

// overGrantRow is the over-grant check of one implementation.
type overGrantRow struct {
	name, algorithm, store string
	ours                   bool
	res                    harness.OverGrant
	err                    error
}

func overGrantAll(cfg config, redisAddr string, log io.Writer) []overGrantRow {
	type entry struct {
		impl  limiters.Impl
		store string
	}
	var impls []entry
	for _, impl := range limiters.Memory() {
		impls = append(impls, entry{impl, "memory"})
	}
	if redisAddr != "" {
		for _, impl := range limiters.Redis() {
			impls = append(impls, entry{impl, "redis"})
		}
	}
	var rows []overGrantRow
	for i, e := range impls {
		if e.impl.Baseline || !cfg.match.MatchString(e.impl.Name) {
			continue
		}
		fmt.Fprintf(log, "over-grant: %s\n", e.impl.Name)
		row := overGrantRow{name: e.impl.Name, algorithm: e.impl.Algorithm, store: e.store, ours: e.impl.Ours}
		env := limiters.Env{RedisAddr: redisAddr, PoolSize: harness.RedisGoroutines,
			Prefix: fmt.Sprintf("og%d-%d:", time.Now().UnixNano(), i)}
		l, err := e.impl.New(env, limiters.Tight)
		if err != nil {
			row.err = err
		} else {
			row.res = harness.CheckOverGrant(l, limiters.Tight, harness.RedisGoroutines, cfg.overGrantFor)
			l.Close()
		}
		rows = append(rows, row)
	}
	return rows
}

// machine describes where the run happened.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range splitLines(string(b)) {
			if name, ok := cutPrefix(line, "model name"); ok {
				model = name
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d logical CPUs, GOMAXPROCS %d, %s %s/%s", model, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
