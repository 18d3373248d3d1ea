package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// config is the command line, validated.
type config struct {
	policy     core.Policy
	store      string
	redisAddrs []string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simulate -algorithm A -limit N -period D [-burst B] [-store memory|embedded|redis] [-redis-addrs host:port,...] < trace.csv > decisions.csv")
		fs.PrintDefaults()
	}
	algorithm := fs.String("algorithm", "token_bucket", "token_bucket, gcra, fixed_window, sliding_log, sliding_window or leaky_bucket")
	limit := fs.Int64("limit", 10, "requests (units of cost) per period")
	period := fs.Duration("period", time.Second, "the period, e.g. 1s, 500ms, 1m")
	burst := fs.Int64("burst", 0, "bucket capacity for token_bucket, gcra and leaky_bucket (default: the limit)")
	store := fs.String("store", "memory", "memory, embedded (Redis scripts on an in-process miniredis) or redis")
	redisAddrs := fs.String("redis-addrs", "127.0.0.1:6379", "with -store redis: one address (standalone) or several (Cluster)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q: the trace is read from standard input", fs.Args())
	}
	alg, err := core.ParseAlgorithm(*algorithm)
	if err != nil {
		return config{}, err
	}
	if alg == core.Concurrency {
		return config{}, errors.New("the concurrency limiter depends on how long requests run, which a trace does not say; simulate a rate algorithm")
	}
	var options []core.Option
	if *burst != 0 {
		options = append(options, core.WithBurst(*burst))
	}
	policy, err := core.NewPolicy("simulated", alg, core.Rate{Limit: *limit, Period: *period}, options...)
	if err != nil {
		return config{}, err
	}
	cfg := config{policy: policy, store: *store}
	switch *store {
	case "memory", "embedded":
	case "redis":
		for _, addr := range strings.Split(*redisAddrs, ",") {
			if addr = strings.TrimSpace(addr); addr != "" {
				cfg.redisAddrs = append(cfg.redisAddrs, addr)
			}
		}
		if len(cfg.redisAddrs) == 0 {
			return config{}, errors.New("-store redis needs -redis-addrs")
		}
	default:
		return config{}, fmt.Errorf("unknown -store %q (memory, embedded or redis)", *store)
	}
	return cfg, nil
}
