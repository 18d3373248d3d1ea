package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzCombinedSeeds = []string{
	`203.0.113.9 - alice [24/Nov/2026:07:00:01 +0000] "GET /a?b=1 HTTP/1.1" 200 512 "https://example.com/" "curl/8.5.0"`,
	`2001:db8::1 - - [24/Nov/2026:07:00:01 -0700] "POST /login HTTP/2.0" 401 - "-" "Go-http-client/1.1" rt=0.001`,
	`203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET / HTTP/1.0" 200 1`,
	`203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "\x16\x03\x01\x02\x00\x01" 400 157 "-" "-"`,
	`203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET /q\"uote HTTP/1.1" 200 1 "-" "a \"b\" c"`,
	`203.0.113.9 - - [24/Nov/2026:07:00:01 +0000] "GET http://example.com/x?y HTTP/1.1" 200 1 "-" "-"`,
	`[::1]:80 - - [24/Nov/2026:07:00:01 +0000] "-" 400 0 "-" "-"`,
	"garbage", "", `- - - [] "" 000 -`,
}

// Any line parses or gives a reason, without panicking, and what parses holds
// together: a non-empty host, a 3-digit status, a key for every -key.
func FuzzParseCombined(f *testing.F) {
	for _, s := range fuzzCombinedSeeds {
		f.Add([]byte(s))
	}
	keys := newKeyMaker()
	specs := []keySpec{{kind: "ip"}, {kind: "path"}}
	for _, name := range combinedFields {
		specs = append(specs, keySpec{kind: "field", name: name})
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := parseCombined(line)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a reason")
			}
			return
		}
		if len(e.host) == 0 || bytes.IndexByte(e.host, ' ') >= 0 || !isStatus(e.status) || !isSize(e.size) {
			t.Fatalf("parsed %q into %+v", line, e)
		}
		var clock combinedClock
		clock.millis(e.time)
		for _, spec := range specs {
			key, err := keys.combinedKey(spec, &e)
			if err == nil && (key == "" || len(key) > 512) {
				t.Fatalf("-key %v gave %q", spec, key)
			}
			if spec.kind == "path" && err == nil && key[0] != '/' && !strings.HasPrefix(key, "h:") {
				t.Fatalf("path key %q", key)
			}
		}
	})
}

// nginxEscape escapes a value as nginx's default log escaping does: quotes,
// backslashes and bytes outside printable ASCII become \xHH.
func nginxEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, `\x%02X`, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// A line written the way nginx writes it reads back field by field.
func FuzzCombinedRoundTrip(f *testing.F) {
	f.Add("203.0.113.9", "alice", "GET /a?b HTTP/1.1", "https://example.com/", "curl/8.5.0", uint16(200), int64(512))
	f.Add("2001:db8::1", "-", `GET /"x" HTTP/1.1`, "-", "a \"b\" [c]", uint16(404), int64(0))
	f.Fuzz(func(t *testing.T, host, user, request, referer, agent string, status uint16, size int64) {
		if host == "" || strings.ContainsAny(host, " ") || strings.Contains(user, " [") || strings.ContainsAny(user, "\n") || size < 0 {
			return // nginx writes neither: $remote_addr has no space
		}
		status = 100 + status%900
		line := fmt.Sprintf(`%s - %s [24/Nov/2026:07:00:01 +0000] "%s" %d %d "%s" "%s"`, host, nginxEscape(user),
			nginxEscape(request), status, size, nginxEscape(referer), nginxEscape(agent))
		if strings.HasSuffix(host, " [") {
			return
		}
		e, err := parseCombined([]byte(line))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got := []string{string(e.host), string(e.user), string(e.request), string(e.status), string(e.size), string(e.referer), string(e.agent)}
		want := []string{host, nginxEscape(user), nginxEscape(request), strconv.Itoa(int(status)), strconv.FormatInt(size, 10), nginxEscape(referer), nginxEscape(agent)}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || !e.hasAgentFields {
			t.Fatalf("%q\n got %q\nwant %q", line, got, want)
		}
	})
}

// The JSON-lines reader agrees with encoding/json: a line is an object when
// json.Unmarshal says so, and every member holds the value json.Unmarshal gives
// it (the last of duplicates).
func FuzzParseJSONLine(f *testing.F) {
	for _, s := range []string{
		`{"time":"2026-11-24T07:00:01.25Z","remote_addr":"203.0.113.9","cost":2}`,
		`{"time":1795503601000,"headers":{"X-Api-Key":["k1"]},"user":{"id":7},"a":[1,{"b":"}"}]}`,
		`{"t\u0069me":1,"time":2, "x" : null , "y":true}`,
		` {"a":"\"}\\"} `, `{}`, `[]`, `{"a":}`, `{"a":1}x`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := parseJSONLine(line, nil)
		var m map[string]json.RawMessage
		jsonErr := json.Unmarshal(line, &m)
		isObject := jsonErr == nil && m != nil
		if (err == nil) != isObject {
			t.Fatalf("%q: parse error %v, json.Unmarshal error %v", line, err, jsonErr)
		}
		if err != nil || !utf8.Valid(line) {
			return
		}
		for name, want := range m {
			got, ok := lookup(e.members, name)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("%q: member %q is %q, json.Unmarshal says %q", line, name, got, want)
			}
		}
		for _, member := range e.members {
			if _, ok := m[memberName(member.name)]; !ok {
				t.Fatalf("%q: member %q that json.Unmarshal does not see", line, member.name)
			}
		}
		e.millis()
		e.cost()
		e.value("a.b.c")
		e.header("X-Api-Key")
		newKeyMaker().jsonKey(keySpec{kind: "path"}, e)
	})
}

var badLinesReported = regexp.MustCompile(`(\d+) lines? could not be read`)

// Whatever a log holds, a replay does not fail or panic, and every line that is
// not blank is either decided or counted as unreadable.
func FuzzReplayLog(f *testing.F) {
	f.Add([]byte(strings.Join(fuzzCombinedSeeds, "\n")), false)
	f.Add([]byte(`{"time":1,"ip":"203.0.113.9"}`+"\n"+`{"time":0,"ip":"203.0.113.9","cost":3}`+"\r\n\n{"), true)
	f.Fuzz(func(t *testing.T, log []byte, jsonLines bool) {
		format := "combined"
		if jsonLines {
			format = "jsonl"
		}
		for _, key := range []string{"ip", "path"} {
			var out, stderr bytes.Buffer
			if err := run(context.Background(), []string{"-format", format, "-key", key}, bytes.NewReader(log), &out, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			decided := bytes.Count(out.Bytes(), []byte("\n")) - 1
			bad := 0
			if m := badLinesReported.FindStringSubmatch(stderr.String()); m != nil {
				bad, _ = strconv.Atoi(m[1])
			}
			lines := 0
			for _, l := range bytes.Split(log, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 {
					lines++
				}
			}
			if decided+bad != lines {
				t.Fatalf("%d lines, %d decided and %d unreadable:\n%s", lines, decided, bad, stderr.String())
			}
		}
	})
}

// Whatever a CSV trace holds, a replay does not panic: it decides every row and
// writes a valid decisions.csv, or stops with an error that names the line, with
// the decisions before it written whole.
func FuzzReplayTrace(f *testing.F) {
	for _, s := range []string{
		"t_ms,key,cost\n0,a,1\n0,b,\n5,a,3\n",
		"\ufefft_ms,key,cost\r\n1,\"tenant,a\",2\r\n2,\"multi\nline\",1\r\n",
		"t_ms,key,cost\n9223372036854775807,a,1\n",
		"t_ms,key,cost\n10,a,1\n5,a,1\n",
		"t_ms,key,cost\n1,a,0\n1,a,-1\n1,a,99\n",
		"t_ms,key,cost\n1,\"a,1\n", "t_ms,key\n", "", "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, trace []byte) {
		var out bytes.Buffer
		err := run(context.Background(), []string{"-limit", "10"}, bytes.NewReader(trace), &out, io.Discard)
		if err != nil && !strings.Contains(err.Error(), "line ") {
			t.Fatalf("error %q does not name a line", err)
		}
		if out.Len() == 0 && err != nil {
			return // the header was refused
		}
		r := csv.NewReader(&out)
		r.FieldsPerRecord = 7
		if _, rerr := r.ReadAll(); rerr != nil {
			t.Fatalf("decisions.csv is not valid (replay error %v): %v", err, rerr)
		}
	})
}
