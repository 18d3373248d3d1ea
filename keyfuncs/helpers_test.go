package keyfuncs

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// header is one header line of a test request.
type header struct{ name, value string }

// newRequest returns a GET request from remoteAddr with the given header
// lines, in order (repeated names make several lines).
func newRequest(remoteAddr string, headers ...header) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remoteAddr
	for _, h := range headers {
		r.Header.Add(h.name, h.value)
	}
	return r
}

func xff(v string) header       { return header{"X-Forwarded-For", v} }
func forwarded(v string) header { return header{"Forwarded", v} }
func xRealIP(v string) header   { return header{"X-Real-IP", v} }

// mustClientIP builds a ClientIP or fails the test.
func mustClientIP(t testing.TB, cfg ClientIPConfig) *ClientIP {
	t.Helper()
	c, err := NewClientIP(cfg)
	if err != nil {
		t.Fatalf("NewClientIP: %v", err)
	}
	return c
}

// prefixes parses CIDR prefixes or fails the test.
func prefixes(t testing.TB, csv string) []netip.Prefix {
	t.Helper()
	p, err := ParseTrustedProxies(csv)
	if err != nil {
		t.Fatalf("ParseTrustedProxies(%q): %v", csv, err)
	}
	return p
}
