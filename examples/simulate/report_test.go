package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeSampleReport replays the sample combined log with a policy that refuses
// the scraper and the IPv6 rotator, and returns the report's path.
func writeSampleReport(t *testing.T, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if len(args) == 0 {
		args = []string{"-algorithm", "sliding_window", "-limit", "60", "-period", "1m"}
	}
	simulate(t, readSample(t, "access.log"), append(args, "-format", "combined", "-report", path)...)
	return path
}

func TestReportShowsThePolicyTheSpanTheChartAndTheKeys(t *testing.T) {
	html, err := os.ReadFile(writeSampleReport(t))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{
		"simulated: sliding_window 60/1m0s",
		"2026-11-20 09:00:01 to 09:09:59 UTC (9m58s)",
		"723 from 6 keys",
		"491</span> (67.9%)", "232</span> (32.1%)",
		"per 10 s (UTC)",
		"<td>ip:203.0.113.66</td><td>300</td><td>172</td><td>57.3%</td>",
		"<td>ip6:2001:db8:abcd:12::/64</td><td>120</td><td>60</td><td>50.0%</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// Ten minutes in 10 s intervals: 60 bars, each an admitted and a refused rect.
	if n := strings.Count(page, `fill="`+admittedColor+`"`); n != 60 {
		t.Errorf("%d admitted bars, want 60", n)
	}
	if n := strings.Count(page, `fill="`+refusedColor+`"`); n != 60 {
		t.Errorf("%d refused bars, want 60", n)
	}
	if !regexp.MustCompile(`<title>2026-11-20 09:02:40 to 09:02:50 UTC: \d+ admitted, \d+ refused</title>`).MatchString(page) {
		t.Errorf("the bars have no hover titles")
	}
}

// The report is one file that opens offline: no scripts, and nothing loaded from
// anywhere (the only URL is the SVG namespace, which is a name, not a fetch).
func TestReportIsSelfContained(t *testing.T) {
	html, err := os.ReadFile(writeSampleReport(t))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(html), `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, banned := range []string{"<script", "src=", "href=", "url(", "@import", "@font-face", "http:", "https:", "<link", "<img", "<iframe"} {
		if strings.Contains(strings.ToLower(page), banned) {
			t.Errorf("the report holds %q", banned)
		}
	}
}

// Keys come from the log, which anyone can write into: they are escaped.
func TestReportEscapesKeys(t *testing.T) {
	jsonl := `{"time":1,"k":"<script>alert(1)</script>"}` + "\n" + `{"time":1,"k":"<script>alert(1)</script>"}` + "\n"
	path := filepath.Join(t.TempDir(), "r.html")
	simulate(t, []byte(jsonl), "-format", "jsonl", "-key", "field:k", "-limit", "1", "-burst", "1", "-report", path)
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "<script>") || !strings.Contains(string(html), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the key is not escaped:\n%s", html)
	}
}

func TestReportOfAnEmptyLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.html")
	simulate(t, []byte("garbage\n"), "-format", "combined", "-report", path)
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no requests", "No key was refused.", "<dt>Unreadable lines</dt><dd>1, skipped</dd>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestReportNumbers(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 723456: "723,456", 1234567: "1,234,567"} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
	for _, w := range intervalWidths {
		if name := widthName(w); strings.Contains(name, "0s") || name == "" {
			t.Errorf("widthName(%v) = %q", w, name)
		}
	}
	if got := widthName(28 * 24 * time.Hour); got != "28 days" {
		t.Errorf("widthName(28 days) = %q", got)
	}
}

// A report path that cannot be written fails before the replay, not after a long
// log; a replay that fails leaves an earlier report as it was.
func TestReportToAFileThatCannotBeWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "r.html")
	var out bytes.Buffer
	err := run(context.Background(), []string{"-format", "jsonl", "-report", path},
		strings.NewReader(`{"time":1,"ip":"203.0.113.9"}`+"\n"), &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "report:") || out.Len() != 0 {
		t.Errorf("error %v, after %d bytes of decisions; want a report error before any", err, out.Len())
	}

	dir := t.TempDir()
	earlier := filepath.Join(dir, "r.html")
	if err := os.WriteFile(earlier, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runQuiet([]byte("not json\n"), "-format", "jsonl", "-strict", "-report", earlier); err == nil {
		t.Fatal("a -strict replay of a bad line succeeded")
	}
	if b, _ := os.ReadFile(earlier); string(b) != "earlier" {
		t.Errorf("the earlier report became %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the failed replay left %d files, want the earlier report alone", len(entries))
	}
}

// The time axis is labelled at round times, a few of them, at interval starts.
func TestTimeAxisLabels(t *testing.T) {
	cases := []struct {
		span  time.Duration
		first string
		count int
	}{
		{10 * time.Minute, "09:00", 5},         // 10 s intervals, a label every 2 min
		{45 * time.Second, "09:00:00", 5},      // 1 s intervals, every 10 s
		{7 * time.Hour, "09:00", 7},            // 5 min intervals, every hour
		{40 * 24 * time.Hour, "2026-11-20", 6}, // 6 h intervals, every 7 days (weeks from the epoch, a Thursday)
	}
	for _, c := range cases {
		var iv intervals
		start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC).UnixMilli()
		for ms := int64(0); ms < c.span.Milliseconds(); ms += c.span.Milliseconds() / 1000 {
			iv.add(start+ms, true)
		}
		ticks := newChart(&iv).XTicks
		if len(ticks) == 0 || len(ticks) > maxTimeTicks {
			t.Errorf("span %v: %d labels", c.span, len(ticks))
			continue
		}
		t.Logf("span %v, intervals of %v: %d labels from %s", c.span, intervalWidths[iv.width], len(ticks), ticks[0].Label)
		if c.span < 24*time.Hour && (ticks[0].Label != c.first || len(ticks) != c.count) {
			t.Errorf("span %v: %d labels from %q, want %d from %q", c.span, len(ticks), ticks[0].Label, c.count, c.first)
		}
	}
}
