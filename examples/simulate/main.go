// Command simulate replays a request trace through a rate-limit policy with a
// virtual clock and prints every decision, so that a policy can be tuned against
// real traffic before it is deployed.
//
//	go run ./examples/simulate -algorithm token_bucket -limit 10 -period 1s -burst 20 \
//	    < testdata/traces/burst-then-steady.csv > decisions.csv
//
// The trace is CSV with a header line: t_ms,key,cost (cost may be empty: 1). Rows are
// in time order; t_ms is milliseconds after the Unix epoch on a virtual clock, so
// windows start at multiples of the period in trace time. The output is CSV:
// t_ms,key,cost,allowed,remaining,retry_after_ms,delay_ms. A summary goes to stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(2)
	}
}

// run is the whole command, separated from main so that tests drive it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	clock := &virtualClock{}
	store, err := openStore(cfg, clock)
	if err != nil {
		return err
	}
	defer store.Close()
	summary, err := replay(ctx, cfg.policy, store, clock, stdin, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, summary)
	return nil
}
