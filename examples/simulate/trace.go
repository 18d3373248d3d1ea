package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
)

// row is one request of a trace.
type row struct {
	line int
	at   int64 // ms on the virtual clock
	key  string
	cost int64
}

// traceReader reads trace rows, reporting malformed ones with their line number.
type traceReader struct {
	csv     *csv.Reader
	input   *rowBound
	policy  core.Policy
	last    int64
	rows    int
	endLine int // the line the last row read ended on
}

func newTraceReader(r io.Reader, policy core.Policy) (*traceReader, error) {
	input := &rowBound{r: r}
	c := csv.NewReader(input)
	c.FieldsPerRecord = -1
	c.TrimLeadingSpace = true
	c.ReuseRecord = true
	input.startRow()
	header, err := c.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("line 1: the trace is empty; it needs the header t_ms,key,cost")
	}
	if err != nil {
		return nil, fmt.Errorf("line 1: %w", err)
	}
	if got := strings.TrimPrefix(strings.Join(header, ","), "\ufeff"); got != "t_ms,key,cost" {
		return nil, fmt.Errorf("line 1: the header is %q, want t_ms,key,cost", truncate(got, 64))
	}
	return &traceReader{csv: c, input: input, policy: policy, endLine: 1}, nil
}

// next returns the next row, or io.EOF after the last.
func (t *traceReader) next() (row, error) {
	t.input.startRow()
	record, err := t.csv.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return row{}, io.EOF
		}
		if errors.Is(err, errRowTooLong) {
			return row{}, fmt.Errorf("line %d: %w", t.endLine+1, err)
		}
		return row{}, err // csv.ParseError names the line
	}
	line, _ := t.csv.FieldPos(0)
	t.endLine, _ = t.csv.FieldPos(len(record) - 1)
	t.endLine += strings.Count(record[len(record)-1], "\n") // a quoted field may hold line breaks
	if len(record) != 3 {
		return row{}, fmt.Errorf("line %d: %d fields, want 3 (t_ms,key,cost)", line, len(record))
	}
	r := row{line: line, key: record[1], cost: 1}
	if r.at, err = strconv.ParseInt(strings.TrimSpace(record[0]), 10, 64); err != nil || r.at < 0 || r.at > maxTraceMillis {
		return row{}, fmt.Errorf("line %d: t_ms %q is not a whole number of milliseconds since the Unix epoch in 0..2^50-1 (microseconds are 1000 times too large)", line, record[0])
	}
	if t.rows > 0 && r.at < t.last {
		return row{}, fmt.Errorf("line %d: t_ms %d comes before the previous row's %d; sort the trace by time (sort -t, -k1,1n)", line, r.at, t.last)
	}
	if r.key == "" || len(r.key) > core.MaxKeyLength {
		return row{}, fmt.Errorf("line %d: the key must hold 1 to %d bytes, got %d", line, core.MaxKeyLength, len(r.key))
	}
	if c := strings.TrimSpace(record[2]); c != "" {
		if r.cost, err = strconv.ParseInt(c, 10, 64); err != nil {
			return row{}, fmt.Errorf("line %d: cost %q is not a whole number", line, record[2])
		}
	}
	if err := t.policy.CheckCost(r.cost); err != nil {
		return row{}, fmt.Errorf("line %d: %w", line, err)
	}
	t.last, t.rows = r.at, t.rows+1
	return r, nil
}

// maxTraceMillis is the latest t_ms of a trace: the Redis stores take instants below
// 2^50 ms, and every store must decide the same trace.
const maxTraceMillis = 1<<50 - 1

// errRowTooLong is the error of a CSV row longer than maxLineLength.
var errRowTooLong = fmt.Errorf("a row longer than %d KiB: a trace row is a time, a key of at most %d bytes and a cost", maxLineLength>>10, core.MaxKeyLength)

// rowBound stops a CSV reader in a row longer than maxLineLength, so that such
// a row is refused before it is held in memory whole, as a long log line is.
type rowBound struct {
	r    io.Reader
	left int // what the current row may still read
}

// startRow allows the next row maxLineLength bytes, plus what the CSV reader's
// buffer may read ahead of it.
func (b *rowBound) startRow() { b.left = maxLineLength + csvReadAhead }

// csvReadAhead is the size of the buffer of a csv.Reader.
const csvReadAhead = 4096

func (b *rowBound) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errRowTooLong
	}
	n, err := b.r.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}
