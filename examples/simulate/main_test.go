package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/reference"
)

// simulation is one simulator run to check against the definitions.
type simulation struct {
	algorithm           core.Algorithm
	limit, burst        int64
	period              time.Duration
	expectSomeRefusals  bool
	expectSomeAdmission bool
}

// Every row the simulator prints, for every rate algorithm and every sample trace,
// must be what DESIGN.md's definition says (package reference, exact rationals).
func TestSimulatorMatchesTheDefinitions(t *testing.T) {
	traces, err := filepath.Glob("../../testdata/traces/*.csv")
	if err != nil || len(traces) == 0 {
		t.Fatalf("no sample traces found: %v", err)
	}
	sims := []simulation{
		{core.TokenBucket, 10, 50, time.Second, true, true},
		{core.GCRA, 10, 20, time.Second, true, true},
		{core.FixedWindow, 10, 0, time.Second, true, true},
		{core.SlidingLog, 10, 0, time.Second, true, true},
		{core.SlidingWindow, 10, 0, time.Second, true, true},
		{core.LeakyBucket, 10, 3, time.Second, true, true},
		{core.TokenBucket, 7, 0, 3 * time.Second, true, true},
		{core.SlidingWindow, 25, 0, 1500 * time.Millisecond, false, true},
	}
	for _, store := range []string{"memory", "embedded"} {
		for _, sim := range sims {
			for _, trace := range traces {
				name := store + "/" + string(sim.algorithm) + "-" + strconv.FormatInt(sim.limit, 10) + "/" + filepath.Base(trace)
				t.Run(name, func(t *testing.T) { checkAgainstDefinition(t, store, sim, trace) })
			}
		}
	}
}

func checkAgainstDefinition(t *testing.T, store string, sim simulation, tracePath string) {
	args := []string{"-algorithm", string(sim.algorithm), "-limit", strconv.FormatInt(sim.limit, 10),
		"-period", sim.period.String(), "-store", store}
	var options []core.Option
	if sim.burst > 0 {
		args = append(args, "-burst", strconv.FormatInt(sim.burst, 10))
		options = append(options, core.WithBurst(sim.burst))
	}
	policy := core.MustPolicy("simulated", sim.algorithm, core.Rate{Limit: sim.limit, Period: sim.period}, options...)
	trace, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), args, bytes.NewReader(trace), &out, &errOut); err != nil {
		if strings.Contains(err.Error(), "can never be admitted") || strings.Contains(err.Error(), "admits costs from") {
			t.Skipf("this trace holds costs above the policy's capacity %d: %v", policy.Capacity(), err)
		}
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	rows, admitted := checkDecisions(t, policy, out.Bytes())
	if rows != strings.Count(string(trace), "\n")-1 {
		t.Fatalf("%d decisions for %d trace rows", rows, strings.Count(string(trace), "\n")-1)
	}
	if !strings.Contains(errOut.String(), strconv.Itoa(admitted)+" admitted") {
		t.Errorf("summary %q does not report %d admitted", errOut.String(), admitted)
	}
}

// checkDecisions checks every row of a decisions.csv against the definition of
// the policy's algorithm (package reference, exact rationals), one model per key,
// and returns the number of rows and of admitted requests.
func checkDecisions(t *testing.T, policy core.Policy, decisions []byte) (rows, admitted int) {
	t.Helper()
	records, err := csv.NewReader(bytes.NewReader(decisions)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(records[0], ","); got != "t_ms,key,cost,allowed,remaining,retry_after_ms,delay_ms" {
		t.Fatalf("output header %q", got)
	}
	models := map[string]reference.Model{}
	for i, r := range records[1:] {
		at, key, cost := atoi(t, r[0]), r[1], atoi(t, r[2])
		m := models[key]
		if m == nil {
			m = reference.New(policy)
			models[key] = m
		}
		want := m.Decide(at, cost)
		allowed := r[3] == "1"
		if allowed != want.Allowed || atoi(t, r[5]) != want.RetryAfterMs || atoi(t, r[6]) != want.DelayMs ||
			(want.Remaining >= 0 && atoi(t, r[4]) != want.Remaining) {
			t.Fatalf("output row %d %v: the definition says %+v", i+1, r, want)
		}
		if allowed {
			admitted++
		}
	}
	return len(records) - 1, admitted
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// The window-boundary trace shows DESIGN.md's warning: a fixed window admits twice
// its limit around a boundary, the sliding variants do not.
func TestBoundaryBurstShowsInTheSimulator(t *testing.T) {
	trace, err := os.ReadFile("../../testdata/traces/window-boundary.csv")
	if err != nil {
		t.Fatal(err)
	}
	admittedNearBoundary := func(algorithm string) int {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"-algorithm", algorithm, "-limit", "10", "-period", "1s"}, bytes.NewReader(trace), &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		n := 0
		rows, _ := csv.NewReader(&out).ReadAll()
		for _, r := range rows[1:] {
			if at := atoi(t, r[0]); at >= 950 && at < 1050 && r[3] == "1" {
				n++
			}
		}
		return n
	}
	if n := admittedNearBoundary("fixed_window"); n != 20 {
		t.Errorf("fixed_window admitted %d of 20 within 100ms of the boundary, want all 20", n)
	}
	for _, alg := range []string{"sliding_log", "sliding_window", "token_bucket"} {
		if n := admittedNearBoundary(alg); n > 11 {
			t.Errorf("%s admitted %d within 100ms, want about the limit of 10", alg, n)
		}
	}
}

func TestMalformedInputIsReportedWithItsLine(t *testing.T) {
	cases := []struct{ name, input, want string }{
		{"empty", "", "line 1: the trace is empty"},
		{"wrong header", "time,key,cost\n1,a,1\n", `line 1: the header is "time,key,cost"`},
		{"bad time", "t_ms,key,cost\n0,a,1\nsoon,a,1\n", `line 3: t_ms "soon"`},
		{"negative time", "t_ms,key,cost\n-5,a,1\n", `line 2: t_ms "-5"`},
		// Microseconds: the Redis stores refuse instants from 2^50 ms, so every store does.
		{"time beyond 2^50 ms", "t_ms,key,cost\n1795165201000000,a,1\n", `line 2: t_ms "1795165201000000" is not a whole number of milliseconds since the Unix epoch in 0..2^50-1`},
		{"out of order", "t_ms,key,cost\n10,a,1\n5,a,1\n", "line 3: t_ms 5 comes before the previous row's 10"},
		{"missing field", "t_ms,key,cost\n10,a\n", "line 2: 2 fields"},
		{"empty key", "t_ms,key,cost\n10,,1\n", "line 2: the key must hold"},
		{"bad cost", "t_ms,key,cost\n10,a,two\n", `line 2: cost "two"`},
		{"cost above capacity", "t_ms,key,cost\n10,a,1\n20,a,99\n", "line 3:"},
		{"zero cost", "t_ms,key,cost\n10,a,0\n", "line 2:"},
		{"bad quoting", "t_ms,key,cost\n10,\"a,1\n", "line 2"},
	}
	for _, c := range cases {
		for _, store := range []string{"memory", "embedded"} {
			var out bytes.Buffer
			err := run(context.Background(), []string{"-limit", "10", "-store", store}, strings.NewReader(c.input), &out, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, -store %s: error %v, want one containing %q", c.name, store, err, c.want)
			}
		}
	}
}

func TestFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-algorithm", "bucket"}, "unknown algorithm"},
		{[]string{"-algorithm", "concurrency"}, "concurrency limiter"},
		{[]string{"-limit", "0"}, "limit must be at least 1"},
		{[]string{"-period", "0s"}, "period must be positive"},
		{[]string{"-burst", "-3"}, "burst must be at least 1"},
		{[]string{"-burst", "-1"}, "burst must be at least 1"},
		{[]string{"-burst", "0"}, "burst must be at least 1"},
		{[]string{"-redis-addrs", "127.0.0.1:6379"}, "applies to -store redis"},
		{[]string{"-algorithm", "fixed_window", "-burst", "3"}, "burst does not apply"},
		{[]string{"-store", "disk"}, `unknown -store "disk"`},
		{[]string{"-store", "redis", "-redis-addrs", ""}, "needs -redis-addrs"},
		{[]string{"trace.csv"}, "unexpected arguments"},
	}
	for _, c := range cases {
		err := run(context.Background(), c.args, strings.NewReader("t_ms,key,cost\n"), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

func TestKeysWithCommasAreQuoted(t *testing.T) {
	var out bytes.Buffer
	in := "t_ms,key,cost\n0,\"tenant,a\",\n"
	if err := run(context.Background(), nil, strings.NewReader(in), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][1] != "tenant,a" || rows[1][2] != "1" {
		t.Fatalf("rows %q, err %v", rows, err)
	}
}

// A replay that stops at a bad row or line leaves every decision made before it
// in the output, each row whole, so that decisions.csv is valid CSV that ends
// where the replay stopped.
func TestDecisionsBeforeAFatalErrorAreWrittenWhole(t *testing.T) {
	const rows = 1000 // several buffers of output
	var trace, log strings.Builder
	trace.WriteString("t_ms,key,cost\n")
	for i := range rows {
		fmt.Fprintf(&trace, "%d,key-%d,1\n", i, i)
		fmt.Fprintf(&log, `{"time":%d,"ip":"10.0.%d.%d"}`+"\n", i, i/256, i%256)
	}
	trace.WriteString("soon,a,1\n")
	log.WriteString("garbage\n")
	for _, c := range []struct {
		name, input string
		args        []string
		badLine     int
	}{
		{"csv", trace.String(), nil, rows + 2},
		{"jsonl -strict", log.String(), []string{"-format", "jsonl", "-strict"}, rows + 1},
	} {
		var out bytes.Buffer
		err := run(context.Background(), c.args, strings.NewReader(c.input), &out, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d:", c.badLine)) {
			t.Fatalf("%s: error %v, want one naming the bad line", c.name, err)
		}
		records, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatalf("%s: the decisions are not valid CSV: %v", c.name, err)
		}
		if len(records) != rows+1 || len(records[rows]) != 7 {
			t.Fatalf("%s: %d output rows, the last %q; want the header and %d whole decisions", c.name, len(records), records[len(records)-1], rows)
		}
	}
}

// countingReader yields n bytes of filler after prefix, counting what is read.
type countingReader struct {
	prefix string
	n      int
	read   int
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.read >= len(r.prefix)+r.n {
		return 0, io.EOF
	}
	p = p[:min(len(p), len(r.prefix)+r.n-r.read)]
	for i := range p {
		if at := r.read + i; at < len(r.prefix) {
			p[i] = r.prefix[at]
		} else {
			p[i] = 'a'
		}
	}
	r.read += len(p)
	return len(p), nil
}

// A CSV row far longer than any key stops the replay once it is known to be too
// long, as a log line does, instead of being read whole into memory first.
func TestHugeCSVRowsAreRefusedEarly(t *testing.T) {
	for _, prefix := range []string{"t_ms,key,cost\n0,", "t_ms,key,cost\n0,\"", "t_ms"} {
		in := &countingReader{prefix: prefix, n: 64 << 20}
		err := run(context.Background(), nil, in, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "longer than 64 KiB") || len(err.Error()) > 200 {
			t.Errorf("%q and 64 MiB: error %.200v, want a short one saying the row is longer than 64 KiB", prefix, err)
		}
		if in.read > 1<<20 {
			t.Errorf("%q and 64 MiB: read %d bytes before giving up, want at most 1 MiB", prefix, in.read)
		}
	}
}
