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
	csv    *csv.Reader
	policy core.Policy
	last   int64
	rows   int
}

func newTraceReader(r io.Reader, policy core.Policy) (*traceReader, error) {
	c := csv.NewReader(r)
	c.FieldsPerRecord = -1
	c.TrimLeadingSpace = true
	c.ReuseRecord = true
	header, err := c.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("line 1: the trace is empty; it needs the header t_ms,key,cost")
	}
	if err != nil {
		return nil, fmt.Errorf("line 1: %w", err)
	}
	if got := strings.TrimPrefix(strings.Join(header, ","), "\ufeff"); got != "t_ms,key,cost" {
		return nil, fmt.Errorf("line 1: the header is %q, want t_ms,key,cost", got)
	}
	return &traceReader{csv: c, policy: policy}, nil
}

// next returns the next row, or io.EOF after the last.
func (t *traceReader) next() (row, error) {
	record, err := t.csv.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return row{}, io.EOF
		}
		return row{}, err // csv.ParseError names the line
	}
	line, _ := t.csv.FieldPos(0)
	if len(record) != 3 {
		return row{}, fmt.Errorf("line %d: %d fields, want 3 (t_ms,key,cost)", line, len(record))
	}
	r := row{line: line, key: record[1], cost: 1}
	if r.at, err = strconv.ParseInt(strings.TrimSpace(record[0]), 10, 64); err != nil || r.at < 0 {
		return row{}, fmt.Errorf("line %d: t_ms %q is not a whole number of milliseconds >= 0", line, record[0])
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
