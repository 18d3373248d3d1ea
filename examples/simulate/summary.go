package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// writeSummary prints what a person reads after a replay: the policy, the
// requests, how many were admitted and refused, the most refused keys, and the
// lines that could not be read.
func writeSummary(w io.Writer, t *tally) {
	var b strings.Builder
	fmt.Fprintf(&b, "policy %s\n", t.policy)
	if t.requests == 0 {
		b.WriteString("0 requests\n")
	} else {
		fmt.Fprintf(&b, "%s from %s, %s\n", count(t.requests, "request"), count(int64(len(t.keys)), "key"), timeSpan(t.firstMs, t.lastMs))
		fmt.Fprintf(&b, "%d admitted (%s), %d refused (%s)\n",
			t.admitted, percent(t.admitted, t.requests), t.refused(), percent(t.refused(), t.requests))
	}
	if top := t.mostRefused(topKeys); len(top) > 0 {
		b.WriteString("most refused keys:\n")
		width, labels := 0, make([]string, len(top))
		for i, k := range top {
			labels[i] = displayKey(k.key)
			width = max(width, len(labels[i]))
		}
		for i, k := range top {
			fmt.Fprintf(&b, "  %-*s  %d of %d refused (%s)\n", width, labels[i], k.refused, k.requests, percent(k.refused, k.requests))
		}
	}
	if t.lateLines > 0 {
		fmt.Fprintf(&b, "%s earlier than a line before them (by up to %v), decided at that line's time\n",
			count(t.lateLines, "line"), time.Duration(t.maxLateMs)*time.Millisecond)
	}
	if t.badLines > 0 {
		fmt.Fprintf(&b, "%s could not be read and skipped (-strict stops at the first):\n", count(t.badLines, "line"))
		for _, l := range t.badSamples {
			fmt.Fprintf(&b, "  line %d: %s\n", l.line, l.reason)
		}
		if t.badLines > int64(len(t.badSamples)) {
			fmt.Fprintf(&b, "  and %d more\n", t.badLines-int64(len(t.badSamples)))
		}
	}
	io.WriteString(w, b.String())
}

// displayKey is key as the summary prints it: quoted when it holds a character that
// is not printable, so that a key from a log (a line break, a terminal escape)
// cannot forge a line of the summary or recolour the terminal.
func displayKey(key string) string {
	if strings.IndexFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(key)
	}
	return key
}

// timeSpan describes the span of a log: "2026-11-24 07:00:00 to 07:10:00 UTC (10m0s)".
func timeSpan(firstMs, lastMs int64) string {
	first, last := time.UnixMilli(firstMs).UTC(), time.UnixMilli(lastMs).UTC()
	lastLayout := "2006-01-02 15:04:05.000"
	if first.Format("2006-01-02") == last.Format("2006-01-02") {
		lastLayout = "15:04:05.000"
	}
	return fmt.Sprintf("%s to %s UTC (%v)", trimMillis(first.Format("2006-01-02 15:04:05.000")),
		trimMillis(last.Format(lastLayout)), last.Sub(first))
}

// trimMillis drops a ".000" that says nothing.
func trimMillis(s string) string { return strings.TrimSuffix(s, ".000") }

// count formats n things: "1 key", "3 keys".
func count(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// percent formats part/whole as "12.5%".
func percent(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}
