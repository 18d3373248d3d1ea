package keyfuncs

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestNewClientIPRejectsInvalidConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  ClientIPConfig
		want string
	}{
		{"invalid prefix", ClientIPConfig{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), {}}}, "TrustedProxies[1]"},
		{"unknown header", ClientIPConfig{Header: 42}, "Header"},
		{"negative header", ClientIPConfig{Header: -1}, "Header"},
		{"negative hops", ClientIPConfig{MaxHops: -1}, "MaxHops"},
		{"negative IPv6 prefix", ClientIPConfig{IPv6Prefix: -1}, "IPv6Prefix"},
		{"IPv6 prefix too long", ClientIPConfig{IPv6Prefix: 129}, "IPv6Prefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClientIP(tc.cfg)
			if err == nil {
				t.Fatalf("NewClientIP accepted %+v: %+v", tc.cfg, c)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "keyfuncs: ") {
				t.Fatalf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

func TestNewClientIPDefaults(t *testing.T) {
	c := mustClientIP(t, ClientIPConfig{})
	if c.maxHops != DefaultMaxHops || c.ipv6Prefix != DefaultIPv6Prefix || len(c.trusted) != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.header != XForwardedFor {
		t.Fatalf("default header: %v, want X-Forwarded-For", c.header)
	}
}

func TestNewClientIPCopiesAndNormalizesConfig(t *testing.T) {
	cfg := ClientIPConfig{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")},
		Header:         XRealIP,
	}
	c := mustClientIP(t, cfg)
	cfg.TrustedProxies[0] = netip.MustParsePrefix("0.0.0.0/0")
	if got := c.trusted[0]; got != netip.MustParsePrefix("10.0.0.0/8") {
		t.Fatalf("trusted prefix = %v, want 10.0.0.0/8", got)
	}
	if c.header != XRealIP {
		t.Fatalf("header = %v, want X-Real-IP", c.header)
	}
}

// A trusted prefix with host bits set is refused, not masked: "10.1.2.3/8" for the
// address 10.1.2.3 would let all of 10.0.0.0/8 set the client's address.
func TestNewClientIPRefusesHostBits(t *testing.T) {
	for _, p := range []string{"10.1.2.3/8", "::ffff:10.1.2.3/104", "2001:db8::1/32"} {
		_, err := NewClientIP(ClientIPConfig{TrustedProxies: []netip.Prefix{netip.MustParsePrefix(p)}})
		if err == nil || !strings.Contains(err.Error(), "host bits set") || !strings.Contains(err.Error(), "TrustedProxies[0]") {
			t.Errorf("%s: %v, want an error naming TrustedProxies[0] and its host bits", p, err)
		}
	}
}

func TestMustClientIPPanicsOnInvalidConfig(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustClientIP did not panic")
		}
	}()
	MustClientIP(ClientIPConfig{MaxHops: -5})
}

// trustedConfig trusts 10.0.0.0/8 and 2001:db8:ffff::/48.
func trustedConfig(t testing.TB) ClientIPConfig {
	return ClientIPConfig{TrustedProxies: prefixes(t, "10.0.0.0/8, 2001:db8:ffff::/48")}
}

func TestClientIPAddr(t *testing.T) {
	const proxy = "10.0.0.1:1234"
	trusted := trustedConfig(t)
	withHeader := func(h Header) ClientIPConfig {
		cfg := trustedConfig(t)
		cfg.Header = h
		return cfg
	}
	fwd := withHeader(Forwarded)
	fwdHops := func(n int) ClientIPConfig {
		cfg := withHeader(Forwarded)
		cfg.MaxHops = n
		return cfg
	}
	withHops := func(n int) ClientIPConfig {
		cfg := trustedConfig(t)
		cfg.MaxHops = n
		return cfg
	}
	cases := []struct {
		name   string
		cfg    ClientIPConfig
		remote string
		hdrs   []header
		want   string
	}{
		// The TCP peer.
		{"no proxy trusted, peer only", ClientIPConfig{}, "203.0.113.9:5555", nil, "203.0.113.9"},
		{"no proxy trusted ignores XFF", ClientIPConfig{}, "203.0.113.9:5555", []header{xff("198.51.100.1")}, "203.0.113.9"},
		{"no proxy trusted ignores X-Real-IP", ClientIPConfig{Header: XRealIP}, "203.0.113.9:5555", []header{xRealIP("198.51.100.1")}, "203.0.113.9"},
		{"untrusted peer ignores headers", trusted, "203.0.113.9:5555", []header{xff("198.51.100.1"), forwarded("for=198.51.100.2")}, "203.0.113.9"},
		{"bare RemoteAddr", ClientIPConfig{}, "203.0.113.9", nil, "203.0.113.9"},
		{"IPv6 RemoteAddr", ClientIPConfig{}, "[2001:db8::1]:443", nil, "2001:db8::1"},
		{"mapped RemoteAddr", ClientIPConfig{}, "[::ffff:203.0.113.9]:80", nil, "203.0.113.9"},
		{"zoned RemoteAddr", ClientIPConfig{}, "[fe80::1%eth0]:80", nil, "fe80::1"},
		{"mapped trusted peer", trusted, "[::ffff:10.0.0.1]:80", []header{xff("203.0.113.9")}, "203.0.113.9"},
		{"IPv6 trusted peer", trusted, "[2001:db8:ffff::1]:443", []header{xff("2001:db8:1:2::99")}, "2001:db8:1:2::99"},
		{"trusted peer without headers", trusted, proxy, nil, "10.0.0.1"},

		// X-Forwarded-For.
		{"XFF one hop", trusted, proxy, []header{xff("203.0.113.9")}, "203.0.113.9"},
		{"XFF rightmost untrusted wins", trusted, proxy, []header{xff("198.51.100.1, 203.0.113.9")}, "203.0.113.9"},
		{"XFF trusted hops passed", trusted, proxy, []header{xff("198.51.100.1, 203.0.113.9, 10.0.0.2, 10.0.0.3")}, "203.0.113.9"},
		{"XFF all trusted: leftmost", trusted, proxy, []header{xff("10.0.0.3, 10.0.0.2")}, "10.0.0.3"},
		{"XFF lines concatenated", trusted, proxy, []header{xff("198.51.100.1, 203.0.113.9"), xff("10.0.0.2")}, "203.0.113.9"},
		{"XFF lines in order", trusted, proxy, []header{xff("203.0.113.9"), xff("10.0.0.5, 10.0.0.6")}, "203.0.113.9"},
		{"XFF later line nearer", trusted, proxy, []header{xff("10.0.0.5"), xff("203.0.113.9")}, "203.0.113.9"},
		{"XFF no spaces", trusted, proxy, []header{xff("198.51.100.1,203.0.113.9,10.0.0.2")}, "203.0.113.9"},
		{"XFF tabs", trusted, proxy, []header{xff("198.51.100.1,\t203.0.113.9\t")}, "203.0.113.9"},
		{"XFF empty entries skipped", trusted, proxy, []header{xff("203.0.113.9,, 10.0.0.2, ")}, "203.0.113.9"},
		{"XFF empty line skipped", trusted, proxy, []header{xff("203.0.113.9"), xff("")}, "203.0.113.9"},
		{"XFF IPv4 with port", trusted, proxy, []header{xff("203.0.113.9:5678")}, "203.0.113.9"},
		{"XFF IPv6", trusted, proxy, []header{xff("2001:db8::1")}, "2001:db8::1"},
		{"XFF bracketed IPv6 with port", trusted, proxy, []header{xff("[2001:db8::1]:443")}, "2001:db8::1"},
		{"XFF bracketed IPv6", trusted, proxy, []header{xff("[2001:db8::1]")}, "2001:db8::1"},
		{"XFF mapped client", trusted, proxy, []header{xff("::ffff:203.0.113.9")}, "203.0.113.9"},
		{"XFF mapped trusted hop", trusted, proxy, []header{xff("203.0.113.9, ::ffff:10.0.0.2")}, "203.0.113.9"},
		{"XFF zoned client", trusted, proxy, []header{xff("fe80::1%eth0")}, "fe80::1"},
		{"XFF zoned trusted hop", trusted, proxy, []header{xff("203.0.113.9, 2001:db8:ffff::7%eth0")}, "203.0.113.9"},
		{"XFF garbage: peer", trusted, proxy, []header{xff("nonsense")}, "10.0.0.1"},
		{"XFF garbage stops the walk", trusted, proxy, []header{xff("198.51.100.1, bogus, 10.0.0.2")}, "10.0.0.2"},
		{"XFF unknown stops the walk", trusted, proxy, []header{xff("198.51.100.1, unknown, 10.0.0.2")}, "10.0.0.2"},
		{"XFF garbage left of client", trusted, proxy, []header{xff("%%%, 203.0.113.9")}, "203.0.113.9"},
		{"XFF IPv4 zone is garbage", trusted, proxy, []header{xff("203.0.113.9%eth0")}, "10.0.0.1"},
		{"XFF bad port is garbage", trusted, proxy, []header{xff("203.0.113.9:http")}, "10.0.0.1"},
		{"XFF only commas", trusted, proxy, []header{xff(",,, ,")}, "10.0.0.1"},
		{"XFF cap: last hop examined", withHops(2), proxy, []header{xff("203.0.113.9, 10.0.0.4, 10.0.0.3, 10.0.0.2")}, "10.0.0.3"},
		{"XFF cap counts empty entries", withHops(2), proxy, []header{xff("203.0.113.9, 10.0.0.3, , 10.0.0.2")}, "10.0.0.2"},
		{"XFF cap not reached", withHops(3), proxy, []header{xff("198.51.100.1, 203.0.113.9, 10.0.0.3, 10.0.0.2")}, "203.0.113.9"},
		{"XFF cap across lines", withHops(2), proxy, []header{xff("203.0.113.9, 10.0.0.4"), xff("10.0.0.3"), xff("10.0.0.2")}, "10.0.0.3"},

		// RFC 7239 Forwarded.
		{"Forwarded for", fwd, proxy, []header{forwarded("for=203.0.113.9")}, "203.0.113.9"},
		{"Forwarded quoted", fwd, proxy, []header{forwarded(`for="203.0.113.9"`)}, "203.0.113.9"},
		{"Forwarded IPv6 in brackets with port", fwd, proxy, []header{forwarded(`for="[2001:db8:cafe::17]:4711"`)}, "2001:db8:cafe::17"},
		{"Forwarded IPv6 in brackets", fwd, proxy, []header{forwarded(`for="[2001:db8:cafe::17]"`)}, "2001:db8:cafe::17"},
		{"Forwarded IPv4 with port", fwd, proxy, []header{forwarded(`for="203.0.113.9:8080"`)}, "203.0.113.9"},
		{"Forwarded obfuscated port", fwd, proxy, []header{forwarded(`for="203.0.113.9:_abc"`)}, "203.0.113.9"},
		{"Forwarded other parameters", fwd, proxy, []header{forwarded("proto=https;for=203.0.113.9;by=10.0.0.1;host=example.com")}, "203.0.113.9"},
		{"Forwarded case-insensitive names", fwd, proxy, []header{forwarded("FOR=203.0.113.9;Proto=https")}, "203.0.113.9"},
		{"Forwarded elements", fwd, proxy, []header{forwarded("for=198.51.100.1, for=203.0.113.9, for=10.0.0.2;proto=https")}, "203.0.113.9"},
		{"Forwarded lines", fwd, proxy, []header{forwarded("for=198.51.100.1, for=203.0.113.9"), forwarded("for=10.0.0.2")}, "203.0.113.9"},
		{"Forwarded all trusted", fwd, proxy, []header{forwarded("for=10.0.0.4, for=10.0.0.3")}, "10.0.0.4"},
		{"Forwarded quoted comma and semicolon", fwd, proxy, []header{forwarded(`for=203.0.113.9;host="a,b;c", for=10.0.0.2`)}, "203.0.113.9"},
		{"Forwarded escapes", fwd, proxy, []header{forwarded(`for="\2\0\3.0.113.9"`)}, "203.0.113.9"},
		{"Forwarded whitespace", fwd, proxy, []header{forwarded(" for = 203.0.113.9 ; proto=http ,  for=10.0.0.2 ")}, "203.0.113.9"},
		{"Forwarded unknown: peer", fwd, proxy, []header{forwarded("for=unknown")}, "10.0.0.1"},
		{"Forwarded UNKNOWN: peer", fwd, proxy, []header{forwarded(`for="UNKNOWN"`)}, "10.0.0.1"},
		{"Forwarded obfuscated: peer", fwd, proxy, []header{forwarded("for=_hidden")}, "10.0.0.1"},
		{"Forwarded obfuscated stops the walk", fwd, proxy, []header{forwarded("for=198.51.100.1, for=_hidden, for=10.0.0.2")}, "10.0.0.2"},
		{"Forwarded unknown stops the walk", fwd, proxy, []header{forwarded("for=198.51.100.1, for=unknown, for=10.0.0.2")}, "10.0.0.2"},
		{"Forwarded unknown left of client", fwd, proxy, []header{forwarded("for=unknown, for=203.0.113.9")}, "203.0.113.9"},
		{"Forwarded no for: peer", fwd, proxy, []header{forwarded("proto=https;by=10.0.0.9")}, "10.0.0.1"},
		{"Forwarded duplicate for: peer", fwd, proxy, []header{forwarded("for=198.51.100.1;for=203.0.113.9")}, "10.0.0.1"},
		{"Forwarded unterminated quote: peer", fwd, proxy, []header{forwarded(`for="203.0.113.9`)}, "10.0.0.1"},
		{"Forwarded unterminated quote on the left", fwd, proxy, []header{forwarded(`for="198.51.100.1, for=203.0.113.9`)}, "203.0.113.9"},
		{"Forwarded pair without value: peer", fwd, proxy, []header{forwarded("for")}, "10.0.0.1"},
		{"Forwarded empty elements skipped", fwd, proxy, []header{forwarded("for=203.0.113.9, , for=10.0.0.2,")}, "203.0.113.9"},
		{"Forwarded mapped", fwd, proxy, []header{forwarded(`for="[::ffff:203.0.113.9]"`)}, "203.0.113.9"},
		{"Forwarded zone", fwd, proxy, []header{forwarded(`for="[fe80::1%eth0]:80"`)}, "fe80::1"},
		{"Forwarded cap", fwdHops(2), proxy, []header{forwarded("for=203.0.113.9, for=10.0.0.3, for=10.0.0.2")}, "10.0.0.3"},

		// X-Real-IP.
		{"X-Real-IP", withHeader(XRealIP), proxy, []header{xRealIP("203.0.113.9")}, "203.0.113.9"},
		{"X-Real-IP IPv6", withHeader(XRealIP), proxy, []header{xRealIP("2001:db8::5")}, "2001:db8::5"},
		{"X-Real-IP last line", withHeader(XRealIP), proxy, []header{xRealIP("198.51.100.1"), xRealIP("203.0.113.9")}, "203.0.113.9"},
		{"X-Real-IP list: peer", withHeader(XRealIP), proxy, []header{xRealIP("198.51.100.1, 203.0.113.9")}, "10.0.0.1"},
		{"X-Real-IP garbage: peer", withHeader(XRealIP), proxy, []header{xRealIP("garbage")}, "10.0.0.1"},
		{"X-Real-IP ignored unless configured", trusted, proxy, []header{xRealIP("203.0.113.9")}, "10.0.0.1"},

		// Which header decides.
		{"default header ignores Forwarded", trusted, proxy, []header{forwarded("for=198.51.100.1"), xff("203.0.113.9")}, "203.0.113.9"},
		{"default header: Forwarded alone ignored", trusted, proxy, []header{forwarded("for=203.0.113.9")}, "10.0.0.1"},
		{"present XFF decides even as garbage", trusted, proxy, []header{xff("garbage"), forwarded("for=198.51.100.1")}, "10.0.0.1"},
		{"Forwarded configured: XFF ignored", fwd, proxy, []header{xff("198.51.100.1"), forwarded("for=203.0.113.9")}, "203.0.113.9"},
		{"Forwarded configured: XFF alone ignored", fwd, proxy, []header{xff("198.51.100.1")}, "10.0.0.1"},
		{"X-Real-IP configured: others ignored", withHeader(XRealIP), proxy, []header{xff("198.51.100.1"), forwarded("for=198.51.100.2"), xRealIP("203.0.113.9")}, "203.0.113.9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustClientIP(t, tc.cfg)
			got, err := c.Addr(newRequest(tc.remote, tc.hdrs...))
			if err != nil {
				t.Fatalf("Addr: %v", err)
			}
			if want := netip.MustParseAddr(tc.want); got != want {
				t.Fatalf("Addr = %v, want %v", got, want)
			}
		})
	}
}

func TestClientIPAddrErrors(t *testing.T) {
	open := mustClientIP(t, ClientIPConfig{})
	for _, remote := range []string{"", "@", "pipe", "203.0.113.9:port", "[2001:db8::1", "999.1.1.1:80", "203.0.113.9%eth0:80"} {
		_, err := open.Addr(newRequest(remote, xff("203.0.113.9")))
		if !errors.Is(err, ErrNoClientIP) || !errors.Is(err, ErrNoKey) {
			t.Errorf("RemoteAddr %q: err = %v, want ErrNoClientIP wrapping ErrNoKey", remote, err)
		}
		if _, err := open.Key(newRequest(remote)); !errors.Is(err, ErrNoClientIP) {
			t.Errorf("Key with RemoteAddr %q: err = %v, want ErrNoClientIP", remote, err)
		}
	}
}

func TestClientIPRequireHeader(t *testing.T) {
	cfg := trustedConfig(t)
	cfg.RequireHeader = true
	c := mustClientIP(t, cfg)
	cases := []struct {
		name    string
		remote  string
		hdrs    []header
		want    string
		wantErr bool
	}{
		{"trusted proxy, no header", "10.0.0.1:1", nil, "", true},
		{"trusted proxy, garbage header", "10.0.0.1:1", []header{xff("bogus")}, "", true},
		{"trusted proxy, unknown", "10.0.0.1:1", []header{forwarded("for=unknown")}, "", true},
		{"trusted proxy, header", "10.0.0.1:1", []header{xff("203.0.113.9")}, "203.0.113.9", false},
		{"untrusted peer needs no header", "203.0.113.9:1", nil, "203.0.113.9", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Addr(newRequest(tc.remote, tc.hdrs...))
			if tc.wantErr {
				if !errors.Is(err, ErrUnidentifiedClient) || errors.Is(err, ErrNoKey) {
					t.Fatalf("err = %v, want ErrUnidentifiedClient (not ErrNoKey)", err)
				}
				return
			}
			if err != nil || got != netip.MustParseAddr(tc.want) {
				t.Fatalf("Addr = %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestClientIPKey(t *testing.T) {
	cases := []struct {
		name       string
		ipv6Prefix int
		remote     string
		want       string
	}{
		{"IPv4", 0, "203.0.113.9:1", "ip:203.0.113.9"},
		{"IPv4-mapped", 0, "[::ffff:203.0.113.9]:1", "ip:203.0.113.9"},
		{"IPv6 default /64", 0, "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:1", "ip6:2001:db8:1:2::/64"},
		{"IPv6 /56", 56, "[2001:db8:1:2ff::1]:1", "ip6:2001:db8:1:200::/56"},
		{"IPv6 /48", 48, "[2001:db8:1:2::1]:1", "ip6:2001:db8:1::/48"},
		{"IPv6 /128", 128, "[2001:db8::1]:1", "ip6:2001:db8::1/128"},
		{"IPv6 zone dropped", 0, "[fe80::1:2%eth0]:1", "ip6:fe80::/64"},
		{"IPv6 loopback", 0, "[::1]:1", "ip6:::/64"},
		// Addresses that stand for an IPv4 host are keyed as that host.
		{"NAT64 well-known prefix", 0, "[64:ff9b::203.0.113.9]:1", "ip:203.0.113.9"},
		{"IPv4-translated (SIIT)", 0, "[::ffff:0:203.0.113.9]:1", "ip:203.0.113.9"},
		{"IPv4-translated, another host of the translator", 0, "[::ffff:0:198.51.100.7]:1", "ip:198.51.100.7"},
		{"6to4", 0, "[2002:cb00:7109:1::1]:1", "ip:203.0.113.9"},
		{"6to4, another /64 of the same site", 128, "[2002:cb00:7109:ffff::2]:1", "ip:203.0.113.9"},
		{"Teredo (RFC 4380's example)", 0, "[2001:0:4136:e378:8000:63bf:3fff:fdd2]:1", "ip:192.0.2.45"},
		{"NAT64 local-use prefix: its layout is the network's own", 0, "[64:ff9b:1::cb00:7109]:1", "ip6:64:ff9b:1::/64"},
		{"not 6to4", 0, "[2003:cb00:7109:1::1]:1", "ip6:2003:cb00:7109:1::/64"},
		{"not Teredo", 0, "[2001:1:4136:e378:8000:63bf:3fff:fdd2]:1", "ip6:2001:1:4136:e378::/64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustClientIP(t, ClientIPConfig{IPv6Prefix: tc.ipv6Prefix})
			got, err := c.Key(newRequest(tc.remote))
			if err != nil || got != tc.want {
				t.Fatalf("Key = %q, %v; want %q", got, err, tc.want)
			}
			if kf := c.KeyFor(netip.MustParseAddrPort(tc.remote).Addr()); kf != tc.want {
				t.Fatalf("KeyFor = %q, want %q", kf, tc.want)
			}
		})
	}
}

func TestKeyForZeroAddr(t *testing.T) {
	if got := mustClientIP(t, ClientIPConfig{}).KeyFor(netip.Addr{}); got != "ip:invalid" {
		t.Fatalf("KeyFor(zero) = %q", got)
	}
}

func TestClientIPSubnet(t *testing.T) {
	c := mustClientIP(t, trustedConfig(t))
	subnet, err := c.Subnet(24, 56)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		remote string
		hdrs   []header
		want   string
	}{
		{"IPv4 /24", "203.0.113.9:1", nil, "net4:203.0.113.0/24"},
		{"IPv4-mapped /24", "[::ffff:203.0.113.200]:1", nil, "net4:203.0.113.0/24"},
		{"IPv6 /56", "[2001:db8:1:2ff::1]:1", nil, "net6:2001:db8:1:200::/56"},
		{"NAT64 /24", "[64:ff9b::203.0.113.200]:1", nil, "net4:203.0.113.0/24"},
		{"IPv4-translated /24", "[::ffff:0:203.0.113.200]:1", nil, "net4:203.0.113.0/24"},
		{"6to4 /24", "[2002:cb00:71c8:42::1]:1", nil, "net4:203.0.113.0/24"},
		{"Teredo /24", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]:1", nil, "net4:192.0.2.0/24"},
		{"behind a trusted proxy", "10.0.0.1:1", []header{xff("198.51.100.77")}, "net4:198.51.100.0/24"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := subnet(newRequest(tc.remote, tc.hdrs...))
			if err != nil || got != tc.want {
				t.Fatalf("Subnet key = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := subnet(newRequest("nonsense")); !errors.Is(err, ErrNoClientIP) {
		t.Fatalf("Subnet with bad RemoteAddr: err = %v, want ErrNoClientIP", err)
	}
	for _, bits := range [][2]int{{0, 56}, {33, 56}, {24, 0}, {24, 129}, {-1, -1}} {
		if _, err := c.Subnet(bits[0], bits[1]); err == nil || !strings.HasPrefix(err.Error(), "keyfuncs: ") {
			t.Errorf("Subnet(%d, %d): err = %v, want a keyfuncs error", bits[0], bits[1], err)
		}
	}
	whole, err := c.Subnet(32, 128)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := whole(newRequest("[2001:db8::1]:1")); got != "net6:2001:db8::1/128" {
		t.Fatalf("Subnet(32, 128) key = %q", got)
	}
}
