package main

import (
	"fmt"
	"io"
	"time"
)

// progressEvery is how often a long replay says how far it got.
const progressEvery = 2 * time.Second

// progressCheckLines is how many lines pass between looks at the wall clock.
const progressCheckLines = 1 << 14

// progress reports a long replay's progress on stderr, at most once per
// interval of wall-clock time, never per line.
type progress struct {
	w     io.Writer
	now   func() time.Time // the wall clock
	every time.Duration
	next  time.Time
}

func newProgress(w io.Writer, now func() time.Time, every time.Duration) *progress {
	return &progress{w: w, now: now, every: every, next: now().Add(every)}
}

// line is called after each line read, with its number and its time in the log.
func (p *progress) line(n int, atMs int64) {
	if n%progressCheckLines != 0 {
		return
	}
	if now := p.now(); !now.Before(p.next) {
		fmt.Fprintf(p.w, "simulate: %d lines read, at %s in the log\n", n, time.UnixMilli(atMs).UTC().Format("2006-01-02 15:04:05 UTC"))
		p.next = now.Add(p.every)
	}
}
