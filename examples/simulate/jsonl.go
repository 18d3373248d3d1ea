package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jsonEntry is one line of a JSON-lines log: an object whose "time" is RFC 3339
// (fractional seconds allowed) or integer ms since the Unix epoch, with an
// optional integer "cost" and the fields a key is read from. Its members slice
// the line, so an entry is valid until the next line is read.
type jsonEntry struct {
	members []jsonMember
}

// jsonMember is one member of an object: its name as written between the
// quotes, and its value as written.
type jsonMember struct {
	name, value []byte
}

// parseJSONLine checks that line is one JSON object and lists its top-level
// members, reusing reuse's storage. Reading a log line by line, this is several
// times faster than decoding each line into a map.
func parseJSONLine(line []byte, reuse []jsonMember) (jsonEntry, error) {
	line = bytes.Trim(line, jsonSpace) // only JSON's white space: a "\v" after the object is not JSON
	if len(line) == 0 || line[0] != '{' {
		return jsonEntry{}, errors.New("not a JSON object")
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return jsonEntry{}, errors.New("not a JSON object: " + shortJSONError(err))
	}
	return jsonEntry{members: objectMembers(line, reuse[:0])}, nil
}

// jsonSpace is the white space JSON allows around a value.
const jsonSpace = " \t\r\n"

// objectMembers appends the members of obj, a valid JSON object, to members.
func objectMembers(obj []byte, members []jsonMember) []jsonMember {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		nameEnd := stringEnd(obj, i)
		name := obj[i+1 : nameEnd-1]
		i = skipSpace(obj, nameEnd)
		i = skipSpace(obj, i+1) // the colon
		valueEnd := valueEnd(obj, i)
		members = append(members, jsonMember{name: name, value: obj[i:valueEnd]})
		i = skipSpace(obj, valueEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return members
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return len(b)
}

// lookup returns the value of the last member called name, as encoding/json
// would decode it.
func lookup(members []jsonMember, name string) ([]byte, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		raw := members[i].name
		if bytes.IndexByte(raw, '\\') < 0 {
			if string(raw) == name { // compared without allocating
				return members[i].value, true
			}
		} else if memberName(raw) == name {
			return members[i].value, true
		}
	}
	return nil, false
}

// memberName returns a member's name unescaped; names without escapes cost nothing.
func memberName(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	if json.Unmarshal(quoted, &s) != nil {
		return ""
	}
	return s
}

// shortJSONError keeps the json package's message without its "json: " prefix.
func shortJSONError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// millis returns the entry's "time" as ms since the Unix epoch.
func (e jsonEntry) millis() (int64, error) {
	raw, ok := lookup(e.members, "time")
	if !ok || isNull(raw) {
		return 0, errors.New(`no "time"`)
	}
	if raw[0] == '"' {
		s, err := jsonString(raw)
		if err != nil {
			return 0, errors.New(`"time" is not a string or a number`)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, errors.New(`"time" is not RFC 3339 (2026-11-24T07:00:01.250Z)`)
		}
		if ms := t.UnixMilli(); ms >= 0 {
			return ms, nil
		}
		return 0, errors.New(`"time" is before 1970`)
	}
	ms, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || ms < 0 {
		return 0, errors.New(`"time" is neither RFC 3339 nor a whole number of ms since 1970`)
	}
	if ms > maxTraceMillis {
		return 0, errors.New(`"time" is beyond 2^50-1 ms since 1970 (microseconds are 1000 times too large)`)
	}
	return ms, nil
}

// cost returns the entry's "cost", 1 when it has none.
func (e jsonEntry) cost() (int64, error) {
	raw, ok := lookup(e.members, "cost")
	if !ok || isNull(raw) {
		return 1, nil
	}
	cost, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, errors.New(`"cost" is not a whole number`)
	}
	return cost, nil
}

// value returns the field name as text: a string's value, or a number's or a
// boolean's literal. A name with dots ("request.client.ip") reaches into nested
// objects when the top level has no field of that very name. ok is false when
// the field is missing or null.
func (e jsonEntry) value(name string) (v string, ok bool, err error) {
	raw, ok := lookup(e.members, name)
	if !ok && strings.Contains(name, ".") {
		raw, ok = nestedField(e.members, name)
	}
	if !ok || isNull(raw) {
		return "", false, nil
	}
	return textOf(raw, "field", name)
}

// textOf returns a JSON value as text, or an error naming the field or header
// (kind) for an object or an array.
func textOf(raw []byte, kind, name string) (string, bool, error) {
	switch raw[0] {
	case '"':
		s, err := jsonString(raw)
		if err != nil {
			return "", false, fmt.Errorf("%s %q: %s", kind, name, shortJSONError(err))
		}
		return s, true, nil
	case '{', '[':
		return "", false, fmt.Errorf("%s %q is an object or an array, not a value", kind, name)
	}
	return string(raw), true, nil
}

// jsonString decodes a JSON string; one without escapes is sliced directly.
func jsonString(raw []byte) (string, error) {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// nestedField follows a dotted path through nested objects.
func nestedField(members []jsonMember, path string) ([]byte, bool) {
	head, rest, _ := strings.Cut(path, ".")
	raw, ok := lookup(members, head)
	for ok && rest != "" {
		if len(raw) == 0 || raw[0] != '{' {
			return nil, false
		}
		head, rest, _ = strings.Cut(rest, ".")
		raw, ok = lookup(objectMembers(raw, nil), head)
	}
	return raw, ok
}

// header returns the request header name: from a "headers" object (names
// matched without regard to case; of an array of values, the first), or else
// from the top-level field nginx would name it ("http_x_api_key" for X-Api-Key).
func (e jsonEntry) header(name string) (string, bool, error) {
	if raw, ok := lookup(e.members, "headers"); ok && len(raw) > 0 && raw[0] == '{' {
		headers := objectMembers(raw, nil)
		for i := len(headers) - 1; i >= 0; i-- {
			v := headers[i].value
			if !strings.EqualFold(memberName(headers[i].name), name) || isNull(v) {
				continue
			}
			if v[0] == '[' {
				var values []string
				if err := json.Unmarshal(v, &values); err != nil {
					return "", false, fmt.Errorf("header %q is not a string or an array of strings", name)
				}
				if len(values) == 0 {
					return "", false, nil
				}
				return values[0], true, nil
			}
			if v[0] != '"' {
				return "", false, fmt.Errorf("header %q is not a string or an array of strings", name)
			}
			return textOf(v, "header", name)
		}
	}
	return e.value(nginxHeaderVariable(name))
}

// nginxHeaderVariable is nginx's name for a request header: X-Api-Key is http_x_api_key.
func nginxHeaderVariable(header string) string {
	return "http_" + strings.ReplaceAll(strings.ToLower(header), "-", "_")
}

func isNull(raw []byte) bool {
	return len(raw) == 0 || string(raw) == "null"
}
