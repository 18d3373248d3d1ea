package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-ratelimit/ratelimit/core"
)

// source yields the requests of a trace or a log in order. next returns io.EOF
// after the last; a *badLine error for a line that cannot be read, after which
// reading goes on; and any other error when reading cannot go on.
type source interface {
	next() (row, error)
}

// badLine is a log line that could not be read, and why.
type badLine struct {
	line   int
	reason string
}

func (b *badLine) Error() string { return fmt.Sprintf("line %d: %s", b.line, b.reason) }

// maxLineLength bounds a log line; longer lines are bad lines.
const maxLineLength = 64 << 10

// lineReader reads the lines of a log one at a time, without holding them.
type lineReader struct {
	r    *bufio.Reader
	line int
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, maxLineLength)}
}

// next returns the next line without its line break, valid until the following
// call, and its number. A line longer than maxLineLength is skipped up to its end
// and reported as a *badLine.
func (l *lineReader) next() ([]byte, int, error) {
	l.line++
	b, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = l.r.ReadSlice('\n')
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, l.line, err
		}
		return nil, l.line, &badLine{line: l.line, reason: fmt.Sprintf("longer than %d KiB", maxLineLength>>10)}
	}
	if err != nil && !(errors.Is(err, io.EOF) && len(b) > 0) {
		return nil, l.line, err // io.EOF at the end
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if l.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\ufeff")) // a byte order mark, as CSV traces may start with
	}
	return bytes.TrimSuffix(b, []byte("\r")), l.line, nil
}

// combinedSource reads a combined (or common) access log.
type combinedSource struct {
	lines *lineReader
	key   keySpec
	keys  keyMaker
	clock combinedClock
}

func (s *combinedSource) next() (row, error) {
	text, n, err := nextNonBlank(s.lines)
	if err != nil {
		return row{}, err
	}
	e, err := parseCombined(text)
	if err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	r := row{line: n, cost: 1}
	if r.at, err = s.clock.millis(e.time); err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	if r.key, err = s.keys.combinedKey(s.key, &e); err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	return r, nil
}

// jsonSource reads a JSON-lines log.
type jsonSource struct {
	lines   *lineReader
	members []jsonMember // reused from line to line
	key     keySpec
	keys    keyMaker
	policy  core.Policy
}

func (s *jsonSource) next() (row, error) {
	text, n, err := nextNonBlank(s.lines)
	if err != nil {
		return row{}, err
	}
	e, err := parseJSONLine(text, s.members)
	if err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	s.members = e.members
	r := row{line: n}
	if r.at, err = e.millis(); err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	if r.cost, err = e.cost(); err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	if err := s.policy.CheckCost(r.cost); err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	if r.key, err = s.keys.jsonKey(s.key, e); err != nil {
		return row{}, &badLine{line: n, reason: err.Error()}
	}
	return r, nil
}

// nextNonBlank returns the next line that holds more than white space: blank
// lines are not requests.
func nextNonBlank(l *lineReader) ([]byte, int, error) {
	for {
		text, n, err := l.next()
		if err != nil || len(bytes.TrimSpace(text)) > 0 {
			return text, n, err
		}
	}
}

// openSource returns the reader of cfg's format.
func openSource(cfg config, in io.Reader) (source, error) {
	switch cfg.format {
	case "combined":
		return &combinedSource{lines: newLineReader(in), key: cfg.key, keys: newKeyMaker()}, nil
	case "jsonl":
		return &jsonSource{lines: newLineReader(in), key: cfg.key, keys: newKeyMaker(), policy: cfg.policy}, nil
	}
	return newTraceReader(in, cfg.policy)
}
