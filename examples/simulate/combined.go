package main

import (
	"bytes"
	"errors"
	"time"
)

// combinedEntry is one line of the NCSA combined log format, as nginx and Apache
// write it by default:
//
//	203.0.113.9 - alice [24/Nov/2026:07:00:01 +0000] "GET /api/resource?id=1 HTTP/1.1" 200 512 "https://example.com/" "curl/8.5.0"
//
// The fields slice the line they were parsed from, so they are valid until the
// next line is read. Values are kept as logged: escapes (Apache's \", nginx's
// \x22) are not undone. The common log format, which ends after the size, is
// read too; its entries have no referer and no user agent.
type combinedEntry struct {
	host, ident, user []byte
	time              []byte // 24/Nov/2026:07:00:01 +0000
	request           []byte // GET /api/resource?id=1 HTTP/1.1
	status, size      []byte
	referer, agent    []byte
	hasAgentFields    bool // false for the common log format
}

// combinedTimeLayout is the layout of the bracketed time of the combined format.
const combinedTimeLayout = "02/Jan/2006:15:04:05 -0700"

// parseCombined splits a combined (or common) log line into its fields. Anything
// after the user agent, which some custom formats append, is ignored.
func parseCombined(line []byte) (combinedEntry, error) {
	var e combinedEntry
	var ok bool
	if e.host, line, ok = cutByte(line, ' '); !ok {
		return e, errors.New("not in the combined log format")
	}
	if len(e.host) == 0 {
		return e, errors.New("no client address")
	}
	if e.ident, line, ok = cutByte(line, ' '); !ok {
		return e, errors.New("no ident field")
	}
	// The user may hold spaces (nginx does not escape them): it ends at " [".
	i := bytes.Index(line, []byte(" ["))
	if i < 0 {
		return e, errors.New("no [time]")
	}
	e.user, line = line[:i], line[i+2:]
	if e.time, line, ok = cutByte(line, ']'); !ok {
		return e, errors.New("no ] after the time")
	}
	if len(line) < 2 || line[0] != ' ' || line[1] != '"' {
		return e, errors.New(`no "request" after the time`)
	}
	if e.request, line, ok = cutQuoted(line[2:]); !ok {
		return e, errors.New("the request has no closing quote")
	}
	if len(line) == 0 || line[0] != ' ' {
		return e, errors.New("no status after the request")
	}
	if e.status, line, ok = cutByte(line[1:], ' '); !isStatus(e.status) {
		return e, errors.New("the status is not 3 digits")
	}
	if !ok {
		return e, errors.New("no size after the status")
	}
	e.size, line, _ = cutByte(line, ' ')
	if !isSize(e.size) {
		return e, errors.New(`the size is not a number or "-"`)
	}
	if len(line) == 0 {
		return e, nil // the common log format
	}
	if line[0] != '"' {
		return e, errors.New(`no "referer" after the size`)
	}
	if e.referer, line, ok = cutQuoted(line[1:]); !ok {
		return e, errors.New("the referer has no closing quote")
	}
	if len(line) < 2 || line[0] != ' ' || line[1] != '"' {
		return e, errors.New(`no "user agent" after the referer`)
	}
	if e.agent, _, ok = cutQuoted(line[2:]); !ok {
		return e, errors.New("the user agent has no closing quote")
	}
	e.hasAgentFields = true
	return e, nil
}

// cutByte returns s up to the first sep and the rest after it, or all of s and
// false when sep is missing.
func cutByte(s []byte, sep byte) (before, after []byte, found bool) {
	if i := bytes.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, nil, false
}

// cutQuoted returns the quoted value that s starts in (after its opening quote)
// and what follows its closing quote. A backslash escapes the byte after it.
func cutQuoted(s []byte) (value, after []byte, found bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[:i], s[i+1:], true
		}
	}
	return nil, nil, false
}

func isStatus(s []byte) bool {
	return len(s) == 3 && isDigits(s)
}

func isSize(s []byte) bool {
	return (len(s) == 1 && s[0] == '-') || (len(s) > 0 && len(s) <= 19 && isDigits(s))
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) > 0
}

// combinedClock parses the times of combined lines, remembering the last one:
// the lines of a busy log share their second.
type combinedClock struct {
	last   []byte
	lastMs int64
}

// millis returns raw (24/Nov/2026:07:00:01 +0000) as ms since the Unix epoch.
func (c *combinedClock) millis(raw []byte) (int64, error) {
	if c.last != nil && bytes.Equal(raw, c.last) {
		return c.lastMs, nil
	}
	t, err := time.Parse(combinedTimeLayout, string(raw))
	if err != nil {
		return 0, errors.New("the time is not like 24/Nov/2026:07:00:01 +0000")
	}
	ms := t.UnixMilli()
	if ms < 0 {
		return 0, errors.New("the time is before 1970")
	}
	c.last, c.lastMs = append(c.last[:0], raw...), ms
	return ms, nil
}

// requestTarget returns the target of a request line ("GET /a?b HTTP/1.1" gives
// "/a?b"), or false when the line has none (nginx logs "-" or the raw bytes of
// a request it could not parse).
func requestTarget(request []byte) ([]byte, bool) {
	_, rest, ok := cutByte(request, ' ')
	if !ok {
		return nil, false
	}
	target, _, _ := cutByte(rest, ' ')
	if len(target) == 0 {
		return nil, false
	}
	return target, true
}

// targetPath returns the path of a request target: the query and fragment
// dropped, and an absolute URI's scheme and host too.
func targetPath(target []byte) ([]byte, bool) {
	if i := bytes.Index(target, []byte("://")); i > 0 && bytes.IndexByte(target[:i], '/') < 0 {
		rest := target[i+3:]
		j := bytes.IndexByte(rest, '/')
		if j < 0 {
			return []byte("/"), true
		}
		target = rest[j:]
	}
	if i := bytes.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	if len(target) == 0 || target[0] != '/' {
		return nil, false
	}
	return target, true
}
