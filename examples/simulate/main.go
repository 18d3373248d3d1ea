// Command simulate replays a request trace or an access log through a rate-limit
// policy with a virtual clock and prints every decision, so that a policy can be
// tuned against real traffic before it is deployed.
//
//	go run ./examples/simulate -algorithm token_bucket -limit 10 -period 1s -burst 20 \
//	    < testdata/traces/burst-then-steady.csv > decisions.csv
//	go run ./examples/simulate -format combined -key ip -algorithm sliding_window -limit 60 -period 1m \
//	    -report report.html < /var/log/nginx/access.log > decisions.csv
//
// With -format csv (the default) the input has a header line, t_ms,key,cost (cost
// may be empty: 1), then rows in time order, where t_ms is milliseconds after the
// Unix epoch. With -format combined (the NCSA combined log of nginx and Apache)
// or -format jsonl (one JSON object per line, with "time" and an optional
// "cost"), -key says what is limited: ip (IPv6 grouped by /64), path,
// header:NAME or field:NAME. The virtual clock reads the log's timestamps, so
// windows start at multiples of the period as they would have in production.
//
// The output is CSV: t_ms,key,cost,allowed,remaining,retry_after_ms,delay_ms. A
// summary goes to stderr: the policy, the requests, how many were admitted and
// refused, the most refused keys, and the log lines that could not be read
// (skipped and counted; -strict makes them fatal). -report writes a
// self-contained HTML page with a chart of the admitted and refused requests.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp): // -h: the usage is printed, as asked
	case err != nil:
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(2)
	}
}

// run is the whole command, separated from main so that tests drive it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runWith(ctx, args, stdin, stdout, stderr, time.Now)
}

// runWith is run with the wall clock that paces progress reports.
func runWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, wallClock func() time.Time) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var report *reportFile
	if cfg.reportPath != "" {
		if report, err = createReportFile(cfg.reportPath); err != nil {
			return err
		}
		defer report.discard()
	}
	src, err := openSource(cfg, stdin)
	if err != nil {
		return err
	}
	clock := &virtualClock{}
	store, err := openStore(cfg, clock)
	if err != nil {
		return err
	}
	defer store.Close()
	sum, err := replay(ctx, cfg.policy, store, clock, src, cfg.strict, stdout, newProgress(stderr, wallClock, progressEvery))
	if err != nil {
		return err
	}
	writeSummary(stderr, sum)
	if report != nil {
		return report.write(sum, cfg)
	}
	return nil
}
