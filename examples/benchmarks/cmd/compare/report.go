package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/harness"
)

// order sorts series by scenario, in the order of scenarios, keeping the order of
// implementations of package limiters within each.
func order(all []*series, scenarios []harness.Scenario) {
	rank := map[string]int{}
	for i, sc := range scenarios {
		rank[sc.Name] = i
	}
	slices.SortStableFunc(all, func(a, b *series) int {
		if d := rank[a.scenario.Name] - rank[b.scenario.Name]; d != 0 {
			return d
		}
		return a.index - b.index
	})
}

// median of xs (xs is not modified).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (s *series) values(f func(sample) float64) []float64 {
	xs := make([]float64, len(s.samples))
	for i, smp := range s.samples {
		xs[i] = f(smp)
	}
	return xs
}

func (s *series) ns() float64 { return median(s.values(func(x sample) float64 { return x.nsPerOp })) }
func (s *series) serverMicros() string {
	return fmt.Sprintf("%.1f", median(s.values(func(x sample) float64 { return x.serverMicros })))
}

func (s *series) clientMicros() string {
	return fmt.Sprintf("%.1f", median(s.values(func(x sample) float64 { return x.clientMicros })))
}

func (s *series) allocs() float64 {
	return median(s.values(func(x sample) float64 { return x.allocsPerOp }))
}

// spread is the range of the ns/op samples as a percentage of their median.
func (s *series) spread() float64 {
	xs := s.values(func(x sample) float64 { return x.nsPerOp })
	if len(xs) < 2 {
		return 0
	}
	return 100 * (slices.Max(xs) - slices.Min(xs)) / median(xs)
}

func (s *series) refused() int64 {
	var n int64
	for _, smp := range s.samples {
		n = max(n, smp.stats.Refused)
	}
	return n
}

// errors is the most failed decisions of any sample, with the first error's text.
func (s *series) errors() string {
	var n int64
	var first error
	for _, smp := range s.samples {
		if smp.stats.Errors > n {
			n, first = smp.stats.Errors, smp.stats.Err
		}
	}
	return errorCell(n, first)
}

func errorCell(n int64, err error) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%v)", n, err)
}

func (s *series) keysUsed() int {
	n := math.MaxInt
	for _, smp := range s.samples {
		n = min(n, smp.stats.KeysUsed)
	}
	if n == math.MaxInt {
		return 0
	}
	return n
}

func label(name string, ours bool) string {
	if ours {
		return "**" + name + "**"
	}
	return name
}

func writeReport(w io.Writer, cfg config, start time.Time, redis bool, all []*series, overGrants []overGrantRow) {
	fmt.Fprintf(w, "Measured %s on %s.\n", start.Format("2006-01-02 15:04 MST"), machine())
	fmt.Fprintf(w, "Command: `%s` (medians of %d interleaved rounds; memory %s, Redis %s, HTTP %s per measurement).\n",
		strings.Join(append([]string{"go run ./cmd/compare"}, os.Args[1:]...), " "), cfg.rounds, cfg.memoryTime, cfg.redisTime, cfg.httpTime)
	if !redis {
		fmt.Fprintln(w, "\nRedis scenarios skipped: no redis-server.")
	}
	writeDecisions(w, all)
	writeTargets(w, all)
	writeHTTP(w, all)
	if overGrants != nil {
		writeOverGrants(w, cfg, overGrants)
	}
}

// writeDecisions writes the in-memory table, then the Redis table, which adds the
// server's and this process's CPU time per decision: on one machine both draw on
// the same cores.
func writeDecisions(w io.Writer, all []*series) {
	for _, kind := range []harness.Kind{harness.KindMemory, harness.KindRedis} {
		redis := kind == harness.KindRedis
		header := false
		for _, s := range all {
			if s.scenario.Kind != kind {
				continue
			}
			if !header {
				if redis {
					fmt.Fprintln(w, "\n| scenario | implementation | algorithm | ns/decision | allocs/decision | decisions/s | server CPU µs/decision | client CPU µs/decision | spread | keys used | refused | errors |")
					fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
				} else {
					fmt.Fprintln(w, "\n| scenario | implementation | algorithm | ns/decision | allocs/decision | decisions/s | spread | keys used | refused | errors |")
					fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
				}
				header = true
			}
			cpu := ""
			if redis {
				cpu = " " + s.serverMicros() + " | " + s.clientMicros() + " |"
			}
			if s.err != nil || len(s.samples) == 0 {
				fmt.Fprintf(w, "| %s | %s | %s | error: %v | | |%s | | | |\n", s.scenario.Name, label(s.name, s.ours), s.algorithm, s.err, strings.Repeat(" |", strings.Count(cpu, "|")))
				continue
			}
			ns := s.ns()
			fmt.Fprintf(w, "| %s | %s | %s | %.0f | %s | %s |%s %.0f%% | %d | %d | %s |\n", s.scenario.Name, label(s.name, s.ours), s.algorithm,
				ns, allocs(s.allocs()), perSecond(1e9/ns), cpu, s.spread(), s.keysUsed(), s.refused(), s.errors())
		}
	}
}

func writeHTTP(w io.Writer, all []*series) {
	bare := map[string]*series{}
	for _, s := range all {
		if s.scenario.Kind == harness.KindHTTP && s.name == "bare" && s.err == nil && len(s.samples) > 0 {
			bare[s.scenario.Name] = s
		}
	}
	header := false
	for _, s := range all {
		if s.scenario.Kind != harness.KindHTTP {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\n| scenario | middleware | ns/request | added ns/request | allocs/request | added allocs | spread | refused |")
			fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
			header = true
		}
		if s.err != nil || len(s.samples) == 0 {
			fmt.Fprintf(w, "| %s | %s | error: %v | | | | | |\n", s.scenario.Name, label(s.name, s.ours), s.err)
			continue
		}
		addedNs, addedAllocs := "", ""
		if b := bare[s.scenario.Name]; b != nil {
			addedNs = fmt.Sprintf("%+.0f", s.ns()-b.ns())
			addedAllocs = fmt.Sprintf("%+.0f", math.Round(s.allocs()-b.allocs()))
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %s | %s | %.0f%% | %d |\n", s.scenario.Name, label(s.name, s.ours),
			s.ns(), addedNs, allocs(s.allocs()), addedAllocs, s.spread(), s.refused())
	}
}

func writeOverGrants(w io.Writer, cfg config, rows []overGrantRow) {
	fmt.Fprintf(w, "\nOver-grant check: 100 per second, burst 100, one key, %d goroutines for %s; bound = burst + rate × elapsed.\n\n",
		harness.RedisGoroutines, cfg.overGrantFor)
	fmt.Fprintln(w, "| store | implementation | algorithm | admitted | bound | over-grant | under bound | decisions | errors |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(w, "| %s | %s | %s | error: %v | | | | | |\n", r.store, label(r.name, r.ours), r.algorithm, r.err)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.1f | %d | %d | %d | %s |\n", r.store, label(r.name, r.ours), r.algorithm,
			r.res.Admitted, r.res.Bound, r.res.Over(), r.res.Under(), r.res.Decisions, errorCell(r.res.Errors, r.res.Err))
	}
}

// allocs prints an allocation count: whole numbers plainly, amortised ones with two
// decimals.
func allocs(x float64) string {
	if math.Abs(x-math.Round(x)) < 0.005 {
		return fmt.Sprintf("%.0f", math.Round(x))
	}
	return fmt.Sprintf("%.2f", x)
}

// perSecond prints a rate with a k or M suffix.
func perSecond(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.1fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

func splitLines(s string) []string { return strings.Split(s, "\n") }

// cutPrefix returns the value of a "key : value" line that starts with key.
func cutPrefix(line, key string) (string, bool) {
	if !strings.HasPrefix(line, key) {
		return "", false
	}
	_, v, ok := strings.Cut(line, ":")
	return strings.TrimSpace(v), ok
}
