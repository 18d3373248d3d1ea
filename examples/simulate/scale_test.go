package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// syntheticLog is a long access log made on the fly, one line at a time, so that
// the test holds none of it: lines requests from keys clients, 300 a second.
// Client i%keys sends line i, so every key has appeared after the first keys
// lines. At each line in checkpoints it calls onCheckpoint.
type syntheticLog struct {
	format       string // combined, jsonl or csv
	lines, keys  int
	line         int
	pending      []byte
	checkpoints  map[int]bool
	onCheckpoint func(line int)
	startMs      int64
}

func newSyntheticLog(format string, lines, keys int) *syntheticLog {
	return &syntheticLog{format: format, lines: lines, keys: keys, startMs: 1795503600000}
}

func (s *syntheticLog) Read(p []byte) (int, error) {
	for len(s.pending) < len(p) && s.line <= s.lines {
		s.pending = s.appendLine(s.pending)
	}
	if len(s.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.pending)
	s.pending = s.pending[:copy(s.pending, s.pending[n:])]
	return n, nil
}

// appendLine appends the next line (a header first, for csv).
func (s *syntheticLog) appendLine(b []byte) []byte {
	i := s.line
	s.line++
	if s.checkpoints[i] && s.onCheckpoint != nil {
		s.onCheckpoint(i)
	}
	if i == 0 {
		if s.format == "csv" {
			return append(b, "t_ms,key,cost\n"...)
		}
		i = s.line // logs have no header: go on to line 1
		s.line++
	}
	if i > s.lines {
		return b
	}
	client := (i * 7919) % s.keys // spread clients over the log
	ms := s.startMs + int64(i)*1000/300
	switch s.format {
	case "combined":
		t := time.UnixMilli(ms).UTC()
		return fmt.Appendf(b, "10.%d.%d.%d - - [%s] \"GET /api/resource?id=%d HTTP/1.1\" 200 512 \"-\" \"bench/1.0\"\n",
			client>>16&255, client>>8&255, client&255, t.Format(combinedTimeLayout), i)
	case "jsonl":
		return fmt.Appendf(b, `{"time":%d,"remote_addr":"10.%d.%d.%d","request":"GET /api/resource?id=%d HTTP/1.1","status":200}`+"\n",
			ms, client>>16&255, client>>8&255, client&255, i)
	}
	b = strconv.AppendInt(b, ms, 10)
	return fmt.Appendf(b, ",ip:10.%d.%d.%d,1\n", client>>16&255, client>>8&255, client&255)
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Memory does not grow with the log's length beyond its keys: the live heap
// after a quarter of a long log, once every key has appeared, is the heap at
// its end. Holding lines or decisions would add tens of bytes per line.
func TestMemoryDoesNotGrowWithTheLog(t *testing.T) {
	lines, keys := 200_000, 5_000
	if testing.Short() {
		lines = 80_000
	}
	for _, format := range []string{"combined", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			log := newSyntheticLog(format, lines, keys)
			heap := map[int]uint64{}
			log.checkpoints = map[int]bool{lines / 4: true, lines: true}
			log.onCheckpoint = func(line int) { heap[line] = liveHeap() }
			var stderr countingWriter
			if err := run(context.Background(), []string{"-format", format, "-limit", "1", "-burst", "5"}, log, io.Discard, &stderr); err != nil {
				t.Fatal(err)
			}
			quarter, end := heap[lines/4], heap[lines]
			t.Logf("live heap after %d lines: %d KiB; after %d: %d KiB", lines/4, quarter>>10, lines, end>>10)
			if quarter == 0 || end == 0 {
				t.Fatal("the checkpoints were not reached")
			}
			// 3/4 of the log passed between the two: 150,000 lines at even 8
			// bytes each would be 1.2 MB.
			if end > quarter+512<<10 {
				t.Errorf("the live heap grew by %d KiB over %d lines", (end-quarter)>>10, lines*3/4)
			}
		})
	}
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkReplayMillionLines replays a million-line log of 10,000 clients on
// the memory store, writing the decisions to io.Discard, and reports lines/s,
// the peak heap (sampled every 50,000 lines, without forcing a collection) and
// the process's peak resident memory.
//
//	go test ./examples/simulate -run '^$' -bench ReplayMillionLines -benchtime 3x
func BenchmarkReplayMillionLines(b *testing.B) {
	const lines, keys = 1_000_000, 10_000
	for _, format := range []string{"csv", "combined", "jsonl"} {
		b.Run(format, func(b *testing.B) {
			var peakHeap uint64
			checkpoints := map[int]bool{}
			for i := 0; i <= lines; i += 50_000 {
				checkpoints[i] = true
			}
			sample := func(int) {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peakHeap = max(peakHeap, m.HeapAlloc)
			}
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				log := newSyntheticLog(format, lines, keys)
				log.checkpoints, log.onCheckpoint = checkpoints, sample
				if err := run(context.Background(), []string{"-format", format, "-limit", "1", "-burst", "5"}, log, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			b.ReportMetric(float64(lines)*float64(b.N)/elapsed.Seconds(), "lines/s")
			b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
			var usage syscall.Rusage
			if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) == nil {
				b.ReportMetric(float64(usage.Maxrss)/1024, "maxrss-MiB")
			}
		})
	}
}
