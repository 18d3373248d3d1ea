package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// jsonEntry is one line of a JSON-lines log: an object whose "time" is RFC 3339
// (fractional seconds allowed) or integer ms since the Unix epoch, with an
// optional integer "cost" and the fields a key is read from.
type jsonEntry struct {
	fields map[string]json.RawMessage
}

// parseJSONLine decodes one line into its top-level fields.
func parseJSONLine(line []byte) (jsonEntry, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return jsonEntry{}, errors.New("not a JSON object")
	}
	var e jsonEntry
	if err := json.Unmarshal(line, &e.fields); err != nil {
		return jsonEntry{}, errors.New("not a JSON object: " + shortJSONError(err))
	}
	return e, nil
}

// shortJSONError keeps the json package's message without its "json: " prefix.
func shortJSONError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// millis returns the entry's "time" as ms since the Unix epoch.
func (e jsonEntry) millis() (int64, error) {
	raw, ok := e.fields["time"]
	if !ok || isNull(raw) {
		return 0, errors.New(`no "time"`)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
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
	return ms, nil
}

// cost returns the entry's "cost", 1 when it has none.
func (e jsonEntry) cost() (int64, error) {
	raw, ok := e.fields["cost"]
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
	raw, ok := e.fields[name]
	if !ok && strings.Contains(name, ".") {
		raw, ok = nestedField(e.fields, name)
	}
	if !ok || isNull(raw) {
		return "", false, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, errors.New("field " + strconv.Quote(name) + ": " + shortJSONError(err))
		}
		return v, true, nil
	case '{', '[':
		return "", false, errors.New("field " + strconv.Quote(name) + " is an object or an array, not a value")
	}
	return string(raw), true, nil
}

// nestedField follows a dotted path through nested objects.
func nestedField(fields map[string]json.RawMessage, path string) (json.RawMessage, bool) {
	head, rest, _ := strings.Cut(path, ".")
	raw, ok := fields[head]
	for ok && rest != "" {
		var inner map[string]json.RawMessage
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &inner) != nil {
			return nil, false
		}
		head, rest, _ = strings.Cut(rest, ".")
		raw, ok = inner[head]
	}
	return raw, ok
}

// header returns the request header name: from a "headers" object (names
// matched without regard to case; of an array of values, the first), or else
// from the top-level field nginx would name it ("http_x_api_key" for X-Api-Key).
func (e jsonEntry) header(name string) (string, bool, error) {
	if raw, ok := e.fields["headers"]; ok && len(raw) > 0 && raw[0] == '{' {
		var headers map[string]json.RawMessage
		if err := json.Unmarshal(raw, &headers); err != nil {
			return "", false, errors.New(`"headers": ` + shortJSONError(err))
		}
		for k, v := range headers {
			if !strings.EqualFold(k, name) || isNull(v) {
				continue
			}
			if v[0] == '[' {
				var values []string
				if err := json.Unmarshal(v, &values); err != nil {
					return "", false, errors.New("header " + strconv.Quote(name) + " is not a string or an array of strings")
				}
				if len(values) == 0 {
					return "", false, nil
				}
				return values[0], true, nil
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return "", false, errors.New("header " + strconv.Quote(name) + " is not a string or an array of strings")
			}
			return s, true, nil
		}
	}
	return e.value(nginxHeaderVariable(name))
}

// nginxHeaderVariable is nginx's name for a request header: X-Api-Key is http_x_api_key.
func nginxHeaderVariable(header string) string {
	return "http_" + strings.ReplaceAll(strings.ToLower(header), "-", "_")
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
