package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/harness"
)

// The Redis store's throughput targets, per decision at 64 goroutines: unbatched, the
// best of its algorithms at least unbatchedTarget times the best peer's throughput;
// batched (redisstore.WithBatching), at least batchedTarget times redis_rate's.
const (
	unbatchedTarget = 0.85
	batchedTarget   = 3.0
	batchedPeer     = "redis_rate"
)

// targetRow is one target in one Redis scenario.
type targetRow struct {
	scenario, what string
	goal           float64
	// ofMedians is the ratio of the decisions/s the table shows (medians of rounds).
	ofMedians float64
	// perRound is the ratio within each round that measured every side. A round runs
	// its measurements back to back, so drift between rounds cancels out of these.
	perRound []float64
}

// met is how many rounds reached the goal.
func (r targetRow) met() int {
	n := 0
	for _, x := range r.perRound {
		if x >= r.goal {
			n++
		}
	}
	return n
}

// targetRows computes the targets of every Redis scenario in all that measured both
// sides of them.
func targetRows(all []*series) []targetRow {
	var rows []targetRow
	var scenarios []string
	byScenario := map[string][]*series{}
	for _, s := range all {
		if s.scenario.Kind != harness.KindRedis || s.err != nil || len(s.samples) == 0 {
			continue
		}
		if byScenario[s.scenario.Name] == nil {
			scenarios = append(scenarios, s.scenario.Name)
		}
		byScenario[s.scenario.Name] = append(byScenario[s.scenario.Name], s)
	}
	for _, name := range scenarios {
		var ours, batched, peers, rate []*series
		for _, s := range byScenario[name] {
			switch {
			case s.ours && s.batched:
				batched = append(batched, s)
			case s.ours:
				ours = append(ours, s)
			case !s.baseline:
				peers = append(peers, s)
				if s.name == batchedPeer {
					rate = append(rate, s)
				}
			}
		}
		if len(ours) > 0 && len(peers) > 0 {
			rows = append(rows, ratioRow(name, "best of ours unbatched ÷ best peer", unbatchedTarget, ours, peers))
		}
		if len(batched) > 0 && len(rate) > 0 {
			rows = append(rows, ratioRow(name, "ours batched ÷ "+batchedPeer, batchedTarget, batched, rate))
		}
	}
	return rows
}

// ratioRow is the best throughput of num over the best of den: of the medians, and in
// each round that measured every series of both.
func ratioRow(scenario, what string, goal float64, num, den []*series) targetRow {
	row := targetRow{scenario: scenario, what: what, goal: goal,
		ofMedians: best(num, func(s *series) float64 { return s.ns() }) / best(den, func(s *series) float64 { return s.ns() })}
	rounds := math.MaxInt
	for _, s := range slices.Concat(num, den) {
		rounds = min(rounds, len(s.samples))
	}
	for r := range rounds {
		at := func(s *series) float64 { return s.samples[r].nsPerOp }
		row.perRound = append(row.perRound, best(num, at)/best(den, at))
	}
	return row
}

// best is the highest throughput (decisions/s) among ss, given each one's ns/decision.
func best(ss []*series, ns func(*series) float64) float64 {
	top := 0.0
	for _, s := range ss {
		top = max(top, 1e9/ns(s))
	}
	return top
}

func writeTargets(w io.Writer, all []*series) {
	rows := targetRows(all)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nRedis targets: unbatched, the best of ours at least %.2f× the best peer; batched, at least %g× %s. "+
		"Each round's ratio compares measurements taken back to back.\n\n", unbatchedTarget, batchedTarget, batchedPeer)
	fmt.Fprintln(w, "| scenario | ratio | target | of the medians | per round: median (min–max) | rounds meeting it |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	for _, r := range rows {
		// Three decimals for the medians' ratio: at two, 0.847 would print as 0.85.
		fmt.Fprintf(w, "| %s | %s | %.2f | %.3f | %.2f (%.2f–%.2f) | %d of %d |\n", r.scenario, r.what, r.goal, r.ofMedians,
			median(r.perRound), slices.Min(r.perRound), slices.Max(r.perRound), r.met(), len(r.perRound))
	}
}
