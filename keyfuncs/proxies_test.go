package keyfuncs

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestParseTrustedProxies(t *testing.T) {
	cases := []struct {
		csv  string
		want string // prefixes joined by " "
	}{
		{"", ""},
		{" , ,", ""},
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.0.0.0/8,192.0.2.1", "10.0.0.0/8 192.0.2.1/32"},
		{" 10.0.0.0/8 , 2001:db8::/32 ,", "10.0.0.0/8 2001:db8::/32"},
		{"2001:db8::1", "2001:db8::1/128"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"::ffff:192.0.2.1", "192.0.2.1/32"},
		{"fe80::1%eth0", "fe80::1/128"},
		{"0.0.0.0/0, ::/0", "0.0.0.0/0 ::/0"},
	}
	for _, tc := range cases {
		got, err := ParseTrustedProxies(tc.csv)
		if err != nil {
			t.Errorf("ParseTrustedProxies(%q): %v", tc.csv, err)
			continue
		}
		var parts []string
		for _, p := range got {
			parts = append(parts, p.String())
		}
		if s := strings.Join(parts, " "); s != tc.want {
			t.Errorf("ParseTrustedProxies(%q) = %q, want %q", tc.csv, s, tc.want)
		}
	}
}

func TestParseTrustedProxiesErrors(t *testing.T) {
	for _, csv := range []string{"10.1.2.3/8", "::ffff:10.1.0.0/104", "2001:db8::1/32", "10.0.0.0/33", "10.0.0.0/8, nonsense", "10.0.0.0/", "/8", "192.0.2.1:80", "fe80::1%eth0/64", "10.0.0.0/8/8"} {
		got, err := ParseTrustedProxies(csv)
		if err == nil {
			t.Errorf("ParseTrustedProxies(%q) = %v, want an error", csv, got)
			continue
		}
		if !strings.HasPrefix(err.Error(), "keyfuncs: trusted proxy ") {
			t.Errorf("error %q does not name the element", err)
		}
	}
}

func TestParsedProxiesAreTrusted(t *testing.T) {
	trusted := prefixes(t, "192.0.2.1, ::ffff:10.0.0.0/104")
	c := mustClientIP(t, ClientIPConfig{TrustedProxies: trusted})
	for _, peer := range []string{"192.0.2.1", "10.1.2.3", "::ffff:10.1.2.3"} {
		if !c.trusts(normalize(netip.MustParseAddr(peer))) {
			t.Errorf("%s is not trusted", peer)
		}
	}
	for _, peer := range []string{"192.0.2.2", "11.0.0.1"} {
		if c.trusts(netip.MustParseAddr(peer)) {
			t.Errorf("%s is trusted", peer)
		}
	}
	if !slices.Equal(trusted, c.trusted) {
		t.Fatalf("NewClientIP changed normalized prefixes: %v -> %v", trusted, c.trusted)
	}
}
