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
	format     string // csv, combined or jsonl
	key        keySpec
	reportPath string // "" for no report
	strict     bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simulate -algorithm A -limit N -period D [-burst B] [-store memory|embedded|redis] [-redis-addrs host:port,...]\n"+
			"                [-format csv|combined|jsonl] [-key ip|path|header:NAME|field:NAME] [-report FILE.html] [-strict] < trace > decisions.csv")
		fs.PrintDefaults()
	}
	algorithm := fs.String("algorithm", "token_bucket", "token_bucket, gcra, fixed_window, sliding_log, sliding_window or leaky_bucket")
	limit := fs.Int64("limit", 10, "requests (units of cost) per period")
	period := fs.Duration("period", time.Second, "the period, e.g. 1s, 500ms, 1m")
	burst := fs.Int64("burst", 0, "bucket capacity for token_bucket, gcra and leaky_bucket (default: the limit)")
	store := fs.String("store", "memory", "memory, embedded (Redis scripts on an in-process miniredis) or redis")
	redisAddrs := fs.String("redis-addrs", "127.0.0.1:6379", "with -store redis: one address (standalone) or several (Cluster)")
	format := fs.String("format", "csv", "csv (t_ms,key,cost), combined (the NCSA combined log of nginx and Apache) or jsonl (one JSON object per line)")
	key := fs.String("key", "ip", "with combined and jsonl, what is limited: ip (IPv6 grouped by /64), path, header:NAME or field:NAME")
	report := fs.String("report", "", "write a self-contained HTML report to this file")
	strict := fs.Bool("strict", false, "with combined and jsonl, stop at the first line that cannot be read instead of skipping it")
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
	if flagGiven(fs, "burst") {
		if *burst < 1 { // core.WithBurst reads -1 as "no burst given": refuse it here
			return config{}, fmt.Errorf("-burst %d: burst must be at least 1", *burst)
		}
		options = append(options, core.WithBurst(*burst))
	}
	policy, err := core.NewPolicy("simulated", alg, core.Rate{Limit: *limit, Period: *period}, options...)
	if err != nil {
		return config{}, err
	}
	cfg := config{policy: policy, store: *store, format: *format, reportPath: *report, strict: *strict}
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
	if flagGiven(fs, "redis-addrs") && *store != "redis" {
		return config{}, fmt.Errorf("-redis-addrs applies to -store redis, not -store %s", *store)
	}
	switch *format {
	case "csv":
		if flagGiven(fs, "key") {
			return config{}, errors.New("-key applies to -format combined and jsonl; a CSV trace holds its keys")
		}
	case "combined", "jsonl":
		if cfg.key, err = parseKeySpec(*key, *format); err != nil {
			return config{}, err
		}
	default:
		return config{}, fmt.Errorf("unknown -format %q (csv, combined or jsonl)", *format)
	}
	return cfg, nil
}

// flagGiven reports whether the flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
