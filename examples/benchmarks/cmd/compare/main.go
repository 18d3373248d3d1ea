// Command compare runs every scenario of package harness against every implementation
// of package limiters, interleaved in one process, and prints the medians as markdown
// tables, followed by the over-grant check.
//
//	cd examples/benchmarks && go run ./cmd/compare
//	go run ./cmd/compare -rounds 9 -memory-time 500ms -redis-time 2s -only memory,http
//
// Each round measures every implementation of a scenario once (in an order rotated
// each round), each measurement one testing.Benchmark of the configured time, so that
// drift on a shared machine spreads over all of them. A Redis server is started on a
// free loopback port unless -redis names one; without redis-server on PATH the Redis
// scenarios are skipped with a message.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// config is the command line.
type config struct {
	rounds       int
	memoryTime   time.Duration
	redisTime    time.Duration
	httpTime     time.Duration
	overGrantFor time.Duration
	only         string
	redisAddr    string
	out          string
	match        *regexp.Regexp
}

func main() {
	testing.Init() // registers -test.benchtime, which each measurement sets
	var cfg config
	flag.IntVar(&cfg.rounds, "rounds", 5, "measurements of each implementation per scenario; the table shows their median")
	flag.DurationVar(&cfg.memoryTime, "memory-time", 200*time.Millisecond, "time of one in-memory measurement")
	flag.DurationVar(&cfg.redisTime, "redis-time", 500*time.Millisecond, "time of one Redis measurement")
	flag.DurationVar(&cfg.httpTime, "http-time", 200*time.Millisecond, "time of one HTTP measurement")
	flag.DurationVar(&cfg.overGrantFor, "overgrant-time", time.Second, "how long the over-grant check hammers each implementation")
	flag.StringVar(&cfg.only, "only", "memory,redis,http,overgrant", "comma-separated parts to run: memory, redis, http, overgrant (or full scenario names)")
	flag.StringVar(&cfg.redisAddr, "redis", "", "host:port of a redis-server to use instead of starting one (its keys are prefixed, never flushed)")
	flag.StringVar(&cfg.out, "out", "", "also write the tables to this file")
	match := flag.String("match", "", "run only the implementations whose names match this regular expression")
	flag.Parse()
	var err error
	if cfg.match, err = regexp.Compile(*match); err != nil {
		fmt.Fprintln(os.Stderr, "compare: -match:", err)
		os.Exit(2)
	}
	if cfg.rounds < 1 {
		fmt.Fprintln(os.Stderr, "compare: -rounds must be at least 1")
		os.Exit(2)
	}
	var w io.Writer = os.Stdout
	if cfg.out != "" {
		f, err := os.Create(cfg.out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = io.MultiWriter(os.Stdout, f)
	}
	if err := run(cfg, w, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// needsRedis reports whether a selected part runs on Redis.
func (c config) needsRedis() bool {
	return c.selected("redis") || c.selected("overgrant") || c.selected("redis/hot-key-64") || c.selected("redis/per-user-64")
}

// selected reports whether the -only list names the part or scenario name.
func (c config) selected(name string) bool {
	part, _, _ := strings.Cut(name, "/")
	for _, s := range strings.Split(c.only, ",") {
		if s = strings.TrimSpace(s); s == name || s == part {
			return true
		}
	}
	return false
}
