package main

import (
	"strings"
	"testing"
)

func TestParseCombined(t *testing.T) {
	cases := []struct {
		name, line                                string
		host, user, time, request, referer, agent string
		common                                    bool
	}{
		{name: "nginx default",
			line: `203.0.113.9 - alice [24/Nov/2026:07:00:01 +0000] "GET /a?b=1 HTTP/1.1" 200 512 "https://example.com/" "curl/8.5.0"`,
			host: "203.0.113.9", user: "alice", time: "24/Nov/2026:07:00:01 +0000", request: "GET /a?b=1 HTTP/1.1", referer: "https://example.com/", agent: "curl/8.5.0"},
		{name: "common log format", line: `::1 - - [24/Nov/2026:07:00:01 -0700] "POST /login HTTP/1.0" 401 -`,
			host: "::1", user: "-", time: "24/Nov/2026:07:00:01 -0700", request: "POST /login HTTP/1.0", common: true},
		{name: "Apache escapes quotes with a backslash", line: `203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET /\"x\" HTTP/1.1" 200 1 "-" "say \"hi\""`,
			host: "203.0.113.9", user: "-", time: "24/Nov/2026:07:00:01 +0000", request: `GET /\"x\" HTTP/1.1`, referer: "-", agent: `say \"hi\"`},
		{name: "nginx escapes them as hex", line: `203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "\x16\x03\x01" 400 157 "-" "-"`,
			host: "203.0.113.9", user: "-", time: "24/Nov/2026:07:00:01 +0000", request: `\x16\x03\x01`, referer: "-", agent: "-"},
		{name: "a user with a space, and fields appended", line: `203.0.113.9 - bob smith [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 0.003 "upstream"`,
			host: "203.0.113.9", user: "bob smith", time: "24/Nov/2026:07:00:01 +0000", request: "GET / HTTP/1.1", referer: "-", agent: "ua"},
	}
	for _, c := range cases {
		e, err := parseCombined([]byte(c.line))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := []string{string(e.host), string(e.user), string(e.time), string(e.request), string(e.referer), string(e.agent)}
		want := []string{c.host, c.user, c.time, c.request, c.referer, c.agent}
		if strings.Join(got, "|") != strings.Join(want, "|") || e.hasAgentFields == c.common {
			t.Errorf("%s:\n got %q (agent fields %v)\nwant %q", c.name, got, e.hasAgentFields, want)
		}
	}
}

func TestParseCombinedRejects(t *testing.T) {
	cases := map[string]string{
		"":      "not in the combined log format",
		"x y z": "no [time]",
		" - - [24/Nov/2026:07:00:01 +0000] \"GET / HTTP/1.1\" 200 1":        "no client address",
		"h - - [24/Nov/2026:07:00:01 +0000 \"GET / HTTP/1.1\" 200 1":        "no ] after the time",
		"h - - [24/Nov/2026:07:00:01 +0000] GET / 200 1":                    `no "request"`,
		"h - - [24/Nov/2026:07:00:01 +0000] \"GET / HTTP/1.1 200 1":         "no closing quote",
		"h - - [24/Nov/2026:07:00:01 +0000] \"GET / HTTP/1.1\" 2000 1":      "not 3 digits",
		"h - - [24/Nov/2026:07:00:01 +0000] \"GET / HTTP/1.1\" 200 big":     "size is not a number",
		"h - - [24/Nov/2026:07:00:01 +0000] \"GET / HTTP/1.1\" 200 1 -":     `no "referer"`,
		"h - - [24/Nov/2026:07:00:01 +0000] \"GET / HTTP/1.1\" 200 1 \"-\"": `no "user agent"`,
	}
	for line, want := range cases {
		if _, err := parseCombined([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", line, err, want)
		}
	}
}

func TestCombinedTimes(t *testing.T) {
	var clock combinedClock
	for raw, want := range map[string]int64{
		"01/Jan/1970:00:00:01 +0000":  1000,
		"01/Jan/1970:01:00:01 +0100":  1000,
		"24/Nov/2026:07:00:01 +0000":  1795503601000,
		"24/Nov/2026:07:00:01 +0000 ": -1, "24/Nov/2026:07:00:01": -1, "31/Dec/1969:23:59:59 +0000": -1,
	} {
		got, err := clock.millis([]byte(raw))
		if want < 0 {
			if err == nil {
				t.Errorf("%q: %d, want an error", raw, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", raw, got, err, want)
		}
		if again, _ := clock.millis([]byte(raw)); again != want {
			t.Errorf("%q read again from the cache: %d", raw, again)
		}
	}
}

func TestRequestPaths(t *testing.T) {
	for request, want := range map[string]string{
		"GET /a/b?c=d HTTP/1.1":                  "/a/b",
		"GET /a#frag HTTP/1.1":                   "/a",
		"GET http://example.com/x?y HTTP/1.1":    "/x",
		"GET https://example.com HTTP/1.1":       "/",
		"GET /redirect?to=http://evil/ HTTP/1.1": "/redirect",
		"GET /":                                  "/",
		"OPTIONS * HTTP/1.1":                     "",
		"CONNECT example.com:443 HTTP/1.1":       "",
		"-":                                      "",
		`\x16\x03\x01`:                           "",
	} {
		path := ""
		if target, ok := requestTarget([]byte(request)); ok {
			if p, ok := targetPath(target); ok {
				path = string(p)
			}
		}
		if path != want {
			t.Errorf("%q: path %q, want %q", request, path, want)
		}
	}
}
