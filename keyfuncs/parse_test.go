package keyfuncs

import (
	"net/netip"
	"testing"
)

func TestParseNode(t *testing.T) {
	cases := []struct {
		in   string
		want string // "" for not an address
	}{
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:80", "192.0.2.1"},
		{"192.0.2.1:_port", "192.0.2.1"},
		{"[2001:db8::1]", "2001:db8::1"},
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"[2001:db8::1]:_x.y-z", "2001:db8::1"},
		{"2001:db8::1", "2001:db8::1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1"},
		{"fe80::1%eth0", "fe80::1"},
		{"[fe80::1%eth0]:1", "fe80::1"},
		{"", ""},
		{"unknown", ""},
		{"_hidden", ""},
		{"192.0.2.1:", ""},
		{"192.0.2.1:65535", "192.0.2.1"},
		{"192.0.2.1:65536", ""},
		{"192.0.2.1:99999", ""},
		{"[2001:db8::1]:99999", ""},
		{"192.0.2.1:123456", ""},
		{"192.0.2.1:8a", ""},
		{"192.0.2.1:_", ""},
		{"192.0.2.1:_a/b", ""},
		{"192.0.2.1:80:80", ""},
		{"[192.0.2.1]", ""},
		{"[2001:db8::1", ""},
		{"[2001:db8::1]x", ""},
		{"[2001:db8::1]:", ""},
		{"2001:db8::1:80:", ""},
		{" 192.0.2.1", ""},
		{"192.0.2.1%eth0", ""},
		{"example.com", ""},
		{"example.com:80", ""},
	}
	for _, tc := range cases {
		got, ok := parseNode(tc.in)
		if tc.want == "" {
			if ok {
				t.Errorf("parseNode(%q) = %v, want not an address", tc.in, got)
			}
			continue
		}
		if !ok || got != netip.MustParseAddr(tc.want) {
			t.Errorf("parseNode(%q) = %v, %v; want %s", tc.in, got, ok, tc.want)
		}
	}
}

func TestCutLastElement(t *testing.T) {
	cases := []struct {
		in, rest, element string
		more, ok          bool
	}{
		{"a, b", "a", " b", true, true},
		{"a", "", "a", false, true},
		{"", "", "", false, true},
		{`a, b="x,y"`, "a", ` b="x,y"`, true, true},
		{`a, b="x\",y"`, "a", ` b="x\",y"`, true, true},
		{`a, b="x\\",y`, `a, b="x\\"`, "y", true, true},
		{`b="x,y`, `b="x`, "y", true, true}, // read from the right, the comma is outside quotes
		{`b="x`, "", "", false, false},
		{`x, "`, "", "", false, false},
		{`"a", "b"`, `"a"`, ` "b"`, true, true},
	}
	for _, tc := range cases {
		rest, element, more, ok := cutLastElement(tc.in)
		if rest != tc.rest || element != tc.element || more != tc.more || ok != tc.ok {
			t.Errorf("cutLastElement(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", tc.in, rest, element, more, ok, tc.rest, tc.element, tc.more, tc.ok)
		}
	}
}

func TestUnquote(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"token", "token", true},
		{`"quoted"`, "quoted", true},
		{`""`, "", true},
		{`"a\"b"`, `a"b`, true},
		{`"a\\b"`, `a\b`, true},
		{`"\1\2"`, "12", true},
		{``, "", false},
		{`"`, "", false},
		{`"abc`, "", false},
		{`"a"b"`, "", false},
		{`"abc\"`, "", false},
	}
	for _, tc := range cases {
		got, ok := unquote(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("unquote(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestForwardedFor(t *testing.T) {
	cases := []struct {
		element string
		want    string // "" for not an address
	}{
		{"for=192.0.2.60", "192.0.2.60"},
		{"for=192.0.2.60;proto=http;by=203.0.113.43", "192.0.2.60"},
		{`For="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::17"},
		{"proto=https;FoR=192.0.2.1", "192.0.2.1"},
		{`host="a;b";for=192.0.2.1`, "192.0.2.1"},
		{";;for=192.0.2.1;;", "192.0.2.1"},
		{"for=unknown", ""},
		{"for=_SEVKISEK", ""},
		{`for="_gazonk"`, ""},
		{"by=192.0.2.1", ""},
		{"for=192.0.2.1;for=192.0.2.2", ""},
		{"for=", ""},
		{"for", ""},
		{`for="192.0.2.1`, ""},
		{`proto="x;for=192.0.2.1`, ""},
		{"for=[2001:db8::1", ""},
	}
	for _, tc := range cases {
		got, ok := forwardedFor(tc.element)
		if tc.want == "" {
			if ok {
				t.Errorf("forwardedFor(%q) = %v, want not an address", tc.element, got)
			}
			continue
		}
		if !ok || got != netip.MustParseAddr(tc.want) {
			t.Errorf("forwardedFor(%q) = %v, %v; want %s", tc.element, got, ok, tc.want)
		}
	}
}
