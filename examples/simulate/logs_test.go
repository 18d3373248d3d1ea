package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// simulate runs the command on input and returns its decisions and its stderr.
func simulate(t *testing.T, input []byte, args ...string) (decisions []byte, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), args, bytes.NewReader(input), &out, &errOut); err != nil {
		t.Fatalf("simulate %v: %v\n%s", args, err, errOut.String())
	}
	return out.Bytes(), errOut.String()
}

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sampleLogs, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The same requests, given as the simulator's CSV, as a combined access log and
// as JSON lines, get the same decisions, and each is the exact model's.
func TestTheSameRequestsInEveryFormatGetTheSameDecisions(t *testing.T) {
	csvTrace, combined, jsonl := readSample(t, "access.csv"), readSample(t, "access.log"), readSample(t, "access.jsonl")
	policies := []struct {
		algorithm    core.Algorithm
		limit, burst int64
		period       time.Duration
	}{
		{core.TokenBucket, 1, 10, time.Second},
		{core.GCRA, 2, 5, time.Second},
		{core.FixedWindow, 60, 0, time.Minute},
		{core.SlidingLog, 30, 0, 30 * time.Second},
		{core.SlidingWindow, 60, 0, time.Minute},
		{core.LeakyBucket, 1, 4, time.Second},
	}
	for _, store := range []string{"memory", "embedded"} {
		for _, p := range policies {
			t.Run(store+"/"+string(p.algorithm), func(t *testing.T) {
				args := []string{"-store", store, "-algorithm", string(p.algorithm), "-limit", strconv.FormatInt(p.limit, 10), "-period", p.period.String()}
				var options []core.Option
				if p.burst > 0 {
					args = append(args, "-burst", strconv.FormatInt(p.burst, 10))
					options = append(options, core.WithBurst(p.burst))
				}
				fromCSV, _ := simulate(t, csvTrace, args...)
				fromCombined, combinedSummary := simulate(t, combined, append(args, "-format", "combined", "-key", "ip")...)
				fromJSON, _ := simulate(t, jsonl, append(args, "-format", "jsonl", "-key", "ip")...)
				if !bytes.Equal(fromCombined, fromCSV) {
					t.Errorf("the combined log's decisions differ from the CSV's:\n%s", firstDifference(fromCombined, fromCSV))
				}
				if !bytes.Equal(fromJSON, fromCSV) {
					t.Errorf("the JSON lines' decisions differ from the CSV's:\n%s", firstDifference(fromJSON, fromCSV))
				}
				policy := core.MustPolicy("simulated", p.algorithm, core.Rate{Limit: p.limit, Period: p.period}, options...)
				rows, admitted := checkDecisions(t, policy, fromCSV)
				if rows != bytes.Count(combined, []byte("\n")) {
					t.Errorf("%d decisions for %d log lines", rows, bytes.Count(combined, []byte("\n")))
				}
				if admitted == 0 || admitted == rows {
					t.Errorf("%d of %d admitted: the sample should show both", admitted, rows)
				}
				if !strings.Contains(combinedSummary, fmt.Sprintf("%d admitted", admitted)) {
					t.Errorf("summary %q does not report %d admitted", combinedSummary, admitted)
				}
			})
		}
	}
}

// Keyed by path, the combined log and the JSON lines agree too: the JSON lines
// hold the request line, as the combined log does.
func TestPathKeysAgreeAcrossFormats(t *testing.T) {
	args := []string{"-algorithm", "sliding_window", "-limit", "100", "-period", "1m", "-key", "path"}
	fromCombined, _ := simulate(t, readSample(t, "access.log"), append(args, "-format", "combined")...)
	fromJSON, _ := simulate(t, readSample(t, "access.jsonl"), append(args, "-format", "jsonl")...)
	if !bytes.Equal(fromCombined, fromJSON) {
		t.Fatalf("decisions differ:\n%s", firstDifference(fromCombined, fromJSON))
	}
	if !bytes.Contains(fromCombined, []byte(",/login,1,0,")) || !bytes.Contains(fromCombined, []byte(",/api/resource,1,1,")) {
		t.Errorf("expected /login refusals and /api/resource admissions keyed by path:\n%.400s", fromCombined)
	}
}

func firstDifference(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("row %d: %q vs %q", i, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d rows vs %d", len(al), len(bl))
}

// The clock is the log's: t_ms is ms since the Unix epoch, whatever the zone
// the log was written in, and JSON times may carry milliseconds.
func TestTimesAreMillisecondsSinceTheEpoch(t *testing.T) {
	combined := `203.0.113.9 - - [24/Nov/2026:08:00:01 +0100] "GET / HTTP/1.1" 200 1 "-" "-"` + "\n"
	out, _ := simulate(t, []byte(combined), "-format", "combined")
	want := strconv.FormatInt(time.Date(2026, 11, 24, 7, 0, 1, 0, time.UTC).UnixMilli(), 10) + ",ip:203.0.113.9,1,1,"
	if !strings.Contains(string(out), want) {
		t.Errorf("combined: %q, want a row starting %q", out, want)
	}
	jsonl := `{"time":"2026-11-24T07:00:01.25Z","ip":"203.0.113.9"}` + "\n" +
		`{"time":"2026-11-24T08:00:01.5+01:00","ip":"203.0.113.9"}` + "\n" +
		`{"time":1795503601750,"ip":"203.0.113.9","cost":2}` + "\n"
	out, _ = simulate(t, []byte(jsonl), "-format", "jsonl")
	for _, want := range []string{"\n1795503601250,ip:203.0.113.9,1,1,", "\n1795503601500,ip:203.0.113.9,1,1,", "\n1795503601750,ip:203.0.113.9,2,1,"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("jsonl: %q, want a row %q", out, want)
		}
	}
}

// A fixed window starts at a multiple of the period in log time, as it would
// have in production: two requests either side of 07:01:00 are in two windows.
func TestWindowsAlignWithTheLogsClock(t *testing.T) {
	jsonl := `{"time":"2026-11-24T07:00:59.900Z","ip":"203.0.113.9"}` + "\n" +
		`{"time":"2026-11-24T07:01:00.100Z","ip":"203.0.113.9"}` + "\n" +
		`{"time":"2026-11-24T07:01:00.200Z","ip":"203.0.113.9"}` + "\n"
	out, _ := simulate(t, []byte(jsonl), "-format", "jsonl", "-algorithm", "fixed_window", "-limit", "1", "-period", "1m")
	rows := strings.Split(strings.TrimSpace(string(out)), "\n")[1:]
	got := []string{}
	for _, r := range rows {
		got = append(got, strings.Split(r, ",")[3])
	}
	if strings.Join(got, "") != "110" {
		t.Errorf("allowed %v, want 1 1 0 (a new window at 07:01:00):\n%s", got, out)
	}
}

func TestIPKeysGroupIPv6ByItsSlash64(t *testing.T) {
	log := strings.Join([]string{
		`2001:db8:1:2::1 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
		`2001:db8:1:2:ffff::9 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
		`2001:db8:1:3::1 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
		`::ffff:203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
		`203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
	}, "\n")
	out, stderr := simulate(t, []byte(log), "-format", "combined", "-limit", "1", "-burst", "1")
	keys := []string{}
	for _, r := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		f := strings.Split(r, ",")
		keys = append(keys, f[1]+"="+f[3])
	}
	want := "ip6:2001:db8:1:2::/64=1 ip6:2001:db8:1:2::/64=0 ip6:2001:db8:1:3::/64=1 ip:203.0.113.9=1 ip:203.0.113.9=0"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("keys and decisions\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(stderr, "5 requests from 3 keys") {
		t.Errorf("summary %q", stderr)
	}
}

func TestKeysByHeaderAndField(t *testing.T) {
	jsonl := strings.Join([]string{
		`{"time":1000,"headers":{"x-api-key":"k1"},"user":{"id":"u1"}}`,
		`{"time":1001,"headers":{"X-API-KEY":["k1","k2"]},"user":{"id":"u1"}}`,
		`{"time":1002,"http_x_api_key":"k2","user.id":"u2"}`,
		`{"time":1003,"http_x_api_key":"k2","user":{"id":7}}`,
	}, "\n")
	keysOf := func(out []byte) string {
		var keys []string
		for _, r := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
			keys = append(keys, strings.Split(r, ",")[1])
		}
		return strings.Join(keys, " ")
	}
	out, _ := simulate(t, []byte(jsonl), "-format", "jsonl", "-key", "header:X-Api-Key")
	if got := keysOf(out); got != "k1 k1 k2 k2" {
		t.Errorf("header keys %q", got)
	}
	out, _ = simulate(t, []byte(jsonl), "-format", "jsonl", "-key", "field:user.id")
	if got := keysOf(out); got != "u1 u1 u2 7" {
		t.Errorf("field keys %q", got)
	}
	combined := `203.0.113.9 - alice smith [24/Nov/2026:07:00:01 +0000] "GET /a?b=1 HTTP/1.1" 200 1 "https://example.com/" "curl/8.5.0"` + "\n"
	for key, want := range map[string]string{
		"header:User-Agent": "curl/8.5.0", "header:referer": "https://example.com/", "field:remote_user": "alice smith",
		"path": "/a", "field:request_uri": "/a?b=1", "field:request_method": "GET", "field:status": "200",
	} {
		out, _ := simulate(t, []byte(combined), "-format", "combined", "-key", key)
		if got := keysOf(out); got != want {
			t.Errorf("-key %s: %q, want %q", key, got, want)
		}
	}
}

// Lines that cannot be read are skipped, counted and named on stderr; -strict
// stops at the first.
func TestBadLinesAreCountedAndNamed(t *testing.T) {
	good := `203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`
	lines := []string{good, "garbage", good, `203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200`, "",
		`host.example.com - - [24/Nov/2026:07:00:02 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
		`203.0.113.9 - - [31/Feb/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
		good, strings.Repeat("x", maxLineLength+10), "more garbage", good, "\x00\xff"}
	log := []byte(strings.Join(lines, "\n"))
	out, stderr := simulate(t, log, "-format", "combined")
	if rows := bytes.Count(out, []byte("\n")) - 1; rows != 4 {
		t.Errorf("%d decisions, want the 4 good lines", rows)
	}
	for _, want := range []string{"7 lines could not be read and skipped", "  line 2: not in the combined log format", "  line 4: no size after the status",
		`  line 6: "host.example.com" is not an IP address`, "  line 7: the time is not like", "  line 9: longer than 64 KiB", "  and 2 more", "4 requests from 1 key,"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	err := run(context.Background(), []string{"-format", "combined", "-strict"}, bytes.NewReader(log), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "line 2: not in the combined log format (-strict)") {
		t.Errorf("-strict: %v", err)
	}

	jsonl := strings.Join([]string{`{"time":1,"ip":"203.0.113.9"}`, `{"time":"yesterday","ip":"203.0.113.9"}`, `{"ip":"203.0.113.9"}`,
		`{"time":2}`, `{"time":3,"ip":"203.0.113.9","cost":99}`, `{"time":3,"ip":"203.0.113.9","cost":"1"}`, `[1,2]`, `{"time":4,`, `{"time":5,"ip":{"v":1}}`}, "\n")
	_, stderr = simulate(t, []byte(jsonl), "-format", "jsonl")
	for _, want := range []string{"8 lines could not be read", `line 2: "time" is not RFC 3339`, `line 3: no "time"`,
		"line 4: no key: none of the fields remote_addr, client_ip, ip", `line 5: ratelimit: invalid cost: policy "simulated" admits costs from 1 to 10, got 99`,
		`line 6: "cost" is not a whole number`, "and 3 more"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// Access logs are written when requests end, so a line may be a little earlier
// than the one before it. The virtual clock does not run backwards: such a line
// is decided at the latest time seen, and the summary says how many there were.
func TestLinesOutOfOrderAreDecidedAtTheLatestTime(t *testing.T) {
	jsonl := `{"time":5000,"ip":"203.0.113.9"}` + "\n" + `{"time":3000,"ip":"203.0.113.9"}` + "\n" + `{"time":4000,"ip":"203.0.113.9"}` + "\n"
	out, stderr := simulate(t, []byte(jsonl), "-format", "jsonl")
	if !strings.Contains(string(out), "\n5000,ip:203.0.113.9,1,1,8,") || strings.Contains(string(out), "\n3000,") {
		t.Errorf("decisions %q: want every row at 5000", out)
	}
	if !strings.Contains(stderr, "2 lines earlier than a line before them (by up to 2s), decided at that line's time") {
		t.Errorf("summary %q", stderr)
	}
}

func TestLongKeysAreHashed(t *testing.T) {
	long := strings.Repeat("k", core.MaxKeyLength+1)
	out, _ := simulate(t, []byte(`{"time":1,"id":"`+long+`"}`+"\n"), "-format", "jsonl", "-key", "field:id")
	if !strings.Contains(string(out), ",h:") || strings.Contains(string(out), long) {
		t.Errorf("decisions %q: want the key replaced by its hash", out)
	}
}

func TestLogFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-format", "xml"}, `unknown -format "xml"`},
		{[]string{"-format", "combined", "-key", "cookie"}, `unknown -key "cookie"`},
		{[]string{"-format", "combined", "-key", "header:X-Api-Key"}, "logs only the Referer and User-Agent"},
		{[]string{"-format", "combined", "-key", "field:upstream"}, "the combined format has the fields remote_addr"},
		{[]string{"-format", "jsonl", "-key", "field:"}, "needs a name"},
		{[]string{"-format", "jsonl", "-key", "ip:x"}, "takes no name"},
		{[]string{"-key", "path"}, "-key applies to -format combined and jsonl"},
	}
	for _, c := range cases {
		err := run(context.Background(), c.args, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// A long log says how far it got, paced by the wall clock, never per line.
func TestProgressIsThrottled(t *testing.T) {
	var log bytes.Buffer
	const lines = 5 * progressCheckLines
	for i := range lines {
		fmt.Fprintf(&log, `{"time":%d,"ip":"203.0.113.%d"}`+"\n", 1795503600000+int64(i), i%200)
	}
	wall := time.Unix(0, 0)
	tick := func() time.Time { wall = wall.Add(time.Second); return wall }
	var stderr bytes.Buffer
	if err := runWith(context.Background(), []string{"-format", "jsonl"}, &log, &bytes.Buffer{}, &stderr, tick); err != nil {
		t.Fatal(err)
	}
	got := strings.Count(stderr.String(), "lines read, at 2026-11-24 ")
	// The clock moves 1 s per look, a look every progressCheckLines lines, and a
	// report is due every 2 s: about every other look.
	if got < 2 || got > lines/progressCheckLines {
		t.Errorf("%d progress lines for %d lines:\n%s", got, lines, stderr.String())
	}
	quiet := func() time.Time { return time.Unix(0, 0) }
	stderr.Reset()
	log.Reset()
	for i := range lines {
		fmt.Fprintf(&log, `{"time":%d,"ip":"203.0.113.%d"}`+"\n", 1795503600000+int64(i), i%200)
	}
	if err := runWith(context.Background(), []string{"-format", "jsonl"}, &log, &bytes.Buffer{}, &stderr, quiet); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "lines read") {
		t.Errorf("progress although no wall time passed:\n%s", stderr.String())
	}
}

// runQuiet runs the command and returns its error.
func runQuiet(input []byte, args ...string) error {
	return run(context.Background(), args, bytes.NewReader(input), &bytes.Buffer{}, &bytes.Buffer{})
}

// A key from a log is printed quoted in the summary when it holds a character that is
// not printable: a line break in it forged a summary line, an escape recoloured the
// terminal.
func TestSummaryQuotesKeysThatAreNotPrintable(t *testing.T) {
	line := `{"time":1,"u":"x\n999 of 999 refused\u001b[31m"}` + "\n"
	_, stderr := simulate(t, []byte(line+line), "-format", "jsonl", "-key", "field:u", "-limit", "1")
	if !strings.Contains(stderr, `"x\n999 of 999 refused\x1b[31m"  1 of 2 refused`) || strings.Contains(stderr, "\x1b") {
		t.Fatalf("summary:\n%s", stderr)
	}
}

// A byte order mark before a log's first line is not part of it, as for a CSV trace.
func TestByteOrderMarkBeforeALog(t *testing.T) {
	for format, line := range map[string]string{
		"jsonl":    `{"time":1,"ip":"203.0.113.9"}`,
		"combined": `203.0.113.9 - - [24/Nov/2026:07:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`,
	} {
		decisions, stderr := simulate(t, []byte("\ufeff"+line+"\n"), "-format", format)
		if !bytes.Contains(decisions, []byte(",ip:203.0.113.9,1,1,")) || strings.Contains(stderr, "could not be read") {
			t.Errorf("%s: decisions %q\n%s", format, decisions, stderr)
		}
	}
}
