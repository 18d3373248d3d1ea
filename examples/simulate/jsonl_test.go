package main

import (
	"strings"
	"testing"
)

func TestJSONMembers(t *testing.T) {
	e, err := parseJSONLine([]byte(` {"a" : 1, "b":"x\"}", "c":{"d":[1,{"e":"]"}],"f":"g"}, "a":2, "h\u0069":true, "n":null} `), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "2", "b": `x"}`, "c.f": "g", "hi": "true"} {
		got, ok, err := e.value(name)
		if err != nil || !ok || got != want {
			t.Errorf("%s: %q, %v, %v; want %q", name, got, ok, err, want)
		}
	}
	for _, name := range []string{"n", "missing", "c.x", "a.b"} {
		if got, ok, err := e.value(name); ok || err != nil {
			t.Errorf("%s: %q, %v, %v; want absent", name, got, ok, err)
		}
	}
	if _, _, err := e.value("c"); err == nil || !strings.Contains(err.Error(), "is an object or an array") {
		t.Errorf("an object as a key: %v", err)
	}
}

func TestJSONLineRejects(t *testing.T) {
	for line, want := range map[string]string{
		"":                 "not a JSON object",
		"[1]":              "not a JSON object",
		`"x"`:              "not a JSON object",
		`{"a":1`:           "not a JSON object: unexpected end",
		`{"a":1} {}`:       "not a JSON object: invalid character",
		`{"a":01}`:         "not a JSON object: invalid character",
		"{\"a\":\"\x01\"}": "not a JSON object: invalid character",
	} {
		if _, err := parseJSONLine([]byte(line), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", line, err, want)
		}
	}
}

func TestJSONTimesAndCosts(t *testing.T) {
	for line, want := range map[string]int64{
		`{"time":"1970-01-01T00:00:01Z"}`:           1000,
		`{"time":"1970-01-01T01:00:01.5+01:00"}`:    1500,
		`{"time":"2026-11-24T07:00:01.123456789Z"}`: 1795503601123,
		`{"time":1795503601123}`:                    1795503601123,
		`{"time":0}`:                                0,
		`{"time":1125899906842623}`:                 1125899906842623, // 2^50-1, the last instant every store takes
		`{"time":1795503601123000}`:                 -1,               // microseconds: beyond 2^50 ms
		`{"time":"2026-11-24 07:00:01"}`:            -1,
		`{"time":1.5}`:                              -1,
		`{"time":-1}`:                               -1,
		`{"time":"1969-12-31T23:59:59Z"}`:           -1,
		`{"time":true}`:                             -1,
		`{"time":null}`:                             -1,
	} {
		e, err := parseJSONLine([]byte(line), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.millis()
		if want < 0 {
			if err == nil {
				t.Errorf("%s: %d, want an error", line, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", line, got, err, want)
		}
	}
	for line, want := range map[string]int64{`{}`: 1, `{"cost":null}`: 1, `{"cost":5}`: 5, `{"cost":"5"}`: -1, `{"cost":2.0}`: -1} {
		e, _ := parseJSONLine([]byte(line), nil)
		got, err := e.cost()
		if (want < 0) != (err != nil) || (want > 0 && got != want) {
			t.Errorf("%s: %d, %v; want %d", line, got, err, want)
		}
	}
}

func TestJSONHeaders(t *testing.T) {
	for line, want := range map[string]string{
		`{"headers":{"x-api-key":"k1"}}`:                     "k1",
		`{"headers":{"X-Api-Key":["k2","k3"]}}`:              "k2",
		`{"headers":{"X-Api-Key":[]},"http_x_api_key":"k4"}`: "",
		`{"headers":{"Other":"x"},"http_x_api_key":"k5"}`:    "k5",
		`{"http_x_api_key":"k6"}`:                            "k6",
		`{}`:                                                 "",
	} {
		e, _ := parseJSONLine([]byte(line), nil)
		got, _, err := e.header("X-Api-Key")
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", line, got, err, want)
		}
	}
	e, _ := parseJSONLine([]byte(`{"headers":{"X-Api-Key":7}}`), nil)
	if _, _, err := e.header("X-Api-Key"); err == nil {
		t.Error("a number as a header: no error")
	}
}
