package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// keySpec says what a log line is limited by: -key ip, path, header:NAME or field:NAME.
type keySpec struct {
	kind string // ip, path, header or field
	name string // the header's or the field's name
}

func (k keySpec) String() string {
	if k.name != "" {
		return k.kind + ":" + k.name
	}
	return k.kind
}

// combinedFields are the fields of the combined format that -key field:NAME
// reads, by their nginx variable names.
var combinedFields = []string{"remote_addr", "remote_user", "request", "request_method", "request_uri", "status", "body_bytes_sent", "http_referer", "http_user_agent"}

// jsonIPFields and jsonPathFields are the fields -key ip and -key path read in a
// JSON-lines log, the first one present deciding.
var (
	jsonIPFields   = []string{"remote_addr", "client_ip", "ip"}
	jsonPathFields = []string{"path", "uri", "request_uri", "request"}
)

// parseKeySpec validates -key for a log format.
func parseKeySpec(s, format string) (keySpec, error) {
	kind, name, hasName := strings.Cut(s, ":")
	spec := keySpec{kind: kind, name: strings.TrimSpace(name)}
	switch kind {
	case "ip", "path":
		if hasName {
			return keySpec{}, fmt.Errorf("-key %s takes no name (ip, path, header:NAME or field:NAME)", s)
		}
		return spec, nil
	case "header", "field":
		if spec.name == "" {
			return keySpec{}, fmt.Errorf("-key %s: needs a name, as in -key %s:NAME", s, kind)
		}
	default:
		return keySpec{}, fmt.Errorf("unknown -key %q (ip, path, header:NAME or field:NAME)", s)
	}
	if format != "combined" {
		return spec, nil
	}
	if kind == "header" {
		switch strings.ToLower(spec.name) {
		case "referer":
			return keySpec{kind: "field", name: "http_referer"}, nil
		case "user-agent":
			return keySpec{kind: "field", name: "http_user_agent"}, nil
		}
		return keySpec{}, fmt.Errorf("-key %s: the combined format logs only the Referer and User-Agent headers; log the header in JSON lines (-format jsonl)", s)
	}
	for _, f := range combinedFields {
		if f == spec.name {
			return spec, nil
		}
	}
	return keySpec{}, fmt.Errorf("-key %s: the combined format has the fields %s", s, strings.Join(combinedFields, ", "))
}

// errNoKey is the reason of a line that lacks what -key reads.
var errNoKey = errors.New("no key")

// keyMaker turns the text of a key into a store key, as the server would.
type keyMaker struct {
	clientIP *keyfuncs.ClientIP
}

func newKeyMaker() keyMaker {
	return keyMaker{clientIP: keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})}
}

// ip returns the key of a client address ("203.0.113.9", "2001:db8::1", or
// either with a port): "ip:203.0.113.9", or the /64 block of an IPv6 client,
// "ip6:2001:db8::/64", the keys the reference server's client IP gives.
func (m keyMaker) ip(s string) (string, error) {
	addr, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return "", fmt.Errorf("%q is not an IP address", truncate(s, 64))
		}
		addr = ap.Addr()
	}
	return m.clientIP.KeyFor(addr), nil
}

// bounded returns a key that fits a store: one longer than core.MaxKeyLength
// becomes the hash of itself, as the library's key functions do.
func bounded(key string) (string, error) {
	switch {
	case key == "":
		return "", errNoKey
	case len(key) > core.MaxKeyLength:
		return hashedKey(key), nil
	}
	return key, nil
}

// combinedKey reads the key of a combined log entry.
func (m keyMaker) combinedKey(spec keySpec, e *combinedEntry) (string, error) {
	switch spec.kind {
	case "ip":
		return m.ip(string(e.host))
	case "path":
		target, ok := requestTarget(e.request)
		if !ok {
			return "", fmt.Errorf("%w: the request %q has no path", errNoKey, truncate(string(e.request), 64))
		}
		path, ok := targetPath(target)
		if !ok {
			return "", fmt.Errorf("%w: the request target %q is not a path", errNoKey, truncate(string(target), 64))
		}
		return bounded(string(path))
	}
	var v []byte
	switch spec.name {
	case "remote_addr":
		v = e.host
	case "remote_user":
		v = e.user
	case "request":
		v = e.request
	case "request_method":
		v, _, _ = cutByte(e.request, ' ')
	case "request_uri":
		v, _ = requestTarget(e.request)
	case "status":
		v = e.status
	case "body_bytes_sent":
		v = e.size
	case "http_referer":
		v = e.referer
	case "http_user_agent":
		v = e.agent
	}
	if len(v) == 0 || (len(v) == 1 && v[0] == '-') {
		return "", fmt.Errorf("%w: %s is empty or -", errNoKey, spec.name)
	}
	return bounded(string(v))
}

// jsonKey reads the key of a JSON-lines entry.
func (m keyMaker) jsonKey(spec keySpec, e jsonEntry) (string, error) {
	switch spec.kind {
	case "ip":
		v, field, err := firstField(e, jsonIPFields)
		if err != nil {
			return "", err
		}
		key, err := m.ip(v)
		if err != nil {
			return "", fmt.Errorf("field %q: %w", field, err)
		}
		return key, nil
	case "path":
		v, field, err := firstField(e, jsonPathFields)
		if err != nil {
			return "", err
		}
		target := []byte(v)
		if field == "request" {
			var ok bool
			if target, ok = requestTarget(target); !ok {
				return "", fmt.Errorf("%w: the request %q has no path", errNoKey, truncate(v, 64))
			}
		}
		path, ok := targetPath(target)
		if !ok {
			return "", fmt.Errorf("%w: field %q: %q is not a path", errNoKey, field, truncate(v, 64))
		}
		return bounded(string(path))
	case "header":
		v, ok, err := e.header(spec.name)
		if err != nil {
			return "", err
		}
		if !ok || v == "" {
			return "", fmt.Errorf("%w: no header %s", errNoKey, spec.name)
		}
		return bounded(v)
	}
	v, ok, err := e.value(spec.name)
	if err != nil {
		return "", err
	}
	if !ok || v == "" {
		return "", fmt.Errorf("%w: no field %q", errNoKey, spec.name)
	}
	return bounded(v)
}

// firstField returns the first of names that the entry holds, and its name.
func firstField(e jsonEntry, names []string) (value, name string, err error) {
	for _, name := range names {
		v, ok, err := e.value(name)
		if err != nil {
			return "", name, err
		}
		if ok && v != "" {
			return v, name, nil
		}
	}
	return "", "", fmt.Errorf("%w: none of the fields %s", errNoKey, strings.Join(names, ", "))
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
