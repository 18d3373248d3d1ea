package keyfuncs

import (
	"fmt"
	"strings"
	"testing"
)

// spoofAttempt is a family of requests from one client that varies what the
// client controls; every request of the family must yield the same key, want.
type spoofAttempt struct {
	name     string
	cfg      ClientIPConfig
	requests []requestSpec
	want     string
}

// requestSpec describes one request: its TCP peer and its header lines.
type requestSpec struct {
	remote  string
	headers []header
}

// rotate builds one request per value, from remote, with the header lines
// that lines makes of the value.
func rotate(remote string, values []string, lines func(v string) []header) []requestSpec {
	specs := make([]requestSpec, len(values))
	for i, v := range values {
		specs[i] = requestSpec{remote: remote, headers: lines(v)}
	}
	return specs
}

// spoofedAddresses are the addresses an attacker claims, in every spelling.
var spoofedAddresses = []string{
	"198.51.100.1", "198.51.100.2", "1.2.3.4", "10.0.0.9", "127.0.0.1", "::1",
	"2001:db8:aaaa::1", "::ffff:8.8.8.8", "[2001:db8::5]:80", "8.8.4.4:53", "fe80::1%eth0",
}

// garbageValues are header values that name no address.
var garbageValues = []string{
	"", " ", ",", ",,,", "unknown", "_hidden", "nonsense", "999.999.999.999", "1.2.3", "1.2.3.4.5",
	"1.2.3.4%zone", "[::1", "::1]", "1.2.3.4:99999999", "1.2.3.4:-1", "\x00\x01", "🦀",
	`"1.2.3.4`, `'1.2.3.4'`, "[1.2.3.4]", "[::1]:80:80", strings.Repeat("9", 4096),
}

func longChain(n int, hop func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(hop(i))
	}
	return b.String()
}

func spoofAttempts(t *testing.T) []spoofAttempt {
	open := ClientIPConfig{}
	openRealIP := ClientIPConfig{Header: XRealIP}
	openForwarded := ClientIPConfig{Header: Forwarded}
	trusted := ClientIPConfig{TrustedProxies: prefixes(t, "10.0.0.0/8, 2001:db8:ffff::/48")}
	trustedForwardedOnly := trusted
	trustedForwardedOnly.Header = Forwarded
	trustedRealIPOnly := trusted
	trustedRealIPOnly.Header = XRealIP

	const attacker = "203.0.113.9:40000"
	const proxy = "10.0.0.1:443"

	var tenThousandSpoofed = longChain(10000, func(i int) string { return fmt.Sprintf("198.51.%d.%d", i/256%256, i%256) })
	var tenThousandTrusted = longChain(10000, func(i int) string { return fmt.Sprintf("10.0.%d.%d", i/256%256, i%256) })
	var tenThousandForwarded = longChain(10000, func(i int) string { return fmt.Sprintf("for=198.51.%d.%d", i/256%256, i%256) })

	return []spoofAttempt{
		// With no trusted proxy, no header counts.
		{"no trusted proxy: rotating X-Forwarded-For", open,
			rotate(attacker, spoofedAddresses, func(v string) []header { return []header{xff(v)} }), "ip:203.0.113.9"},
		{"no trusted proxy: rotating X-Real-IP", openRealIP,
			rotate(attacker, spoofedAddresses, func(v string) []header { return []header{xRealIP(v)} }), "ip:203.0.113.9"},
		{"no trusted proxy: rotating Forwarded", openForwarded,
			rotate(attacker, spoofedAddresses, func(v string) []header { return []header{forwarded(`for="` + v + `"`)} }), "ip:203.0.113.9"},
		{"no trusted proxy: all headers at once", open,
			rotate(attacker, spoofedAddresses, func(v string) []header {
				return []header{xff(v), xff(v + ", " + v), forwarded("for=" + v), xRealIP(v)}
			}), "ip:203.0.113.9"},
		{"untrusted peer claiming to be a proxy", trusted,
			rotate(attacker, spoofedAddresses, func(v string) []header {
				return []header{xff(v + ", 10.0.0.2"), forwarded("for=" + v + ", for=10.0.0.2"), xRealIP(v)}
			}), "ip:203.0.113.9"},

		// Behind a trusted proxy that appends the address it saw.
		{"trusted proxy: rotating the leftmost X-Forwarded-For hop", trusted,
			rotate(proxy, spoofedAddresses, func(v string) []header { return []header{xff(v + ", 203.0.113.9")} }), "ip:203.0.113.9"},
		{"trusted proxy: client's own X-Forwarded-For line", trusted,
			rotate(proxy, spoofedAddresses, func(v string) []header { return []header{xff(v), xff("203.0.113.9")} }), "ip:203.0.113.9"},
		{"trusted proxy: client claims a trusted hop", trusted,
			rotate(proxy, spoofedAddresses, func(v string) []header { return []header{xff(v + ", 10.9.9.9, 203.0.113.9, 10.0.0.2")} }), "ip:203.0.113.9"},
		{"trusted proxy: rotating the leftmost Forwarded element", trustedForwardedOnly,
			rotate(proxy, spoofedAddresses, func(v string) []header {
				return []header{forwarded(`for="` + v + `", for=203.0.113.9;proto=https`)}
			}), "ip:203.0.113.9"},
		{"trusted proxy: malformed client text before the proxy's element", trustedForwardedOnly,
			rotate(proxy, []string{`for="`, `for="1.2.3.4`, `for=1.2.3.4;for=5.6.7.8`, `"\`, `for="\"`, `;;;`, `=`, `for=[::1`},
				func(v string) []header { return []header{forwarded(v + ", for=203.0.113.9")} }), "ip:203.0.113.9"},
		{"trusted proxy: Forwarded spoofed while the proxy sets X-Forwarded-For", trusted,
			rotate(proxy, spoofedAddresses, func(v string) []header {
				return []header{forwarded("for=" + v), xff("203.0.113.9")}
			}), "ip:203.0.113.9"},
		{"trusted proxy sets only Forwarded: X-Forwarded-For spoofed", trustedForwardedOnly,
			rotate(proxy, spoofedAddresses, func(v string) []header {
				return []header{xff(v), forwarded("for=203.0.113.9")}
			}), "ip:203.0.113.9"},
		{"trusted proxy sets Forwarded, default header: Forwarded ignored", trusted,
			rotate(proxy, spoofedAddresses, func(v string) []header {
				return []header{forwarded("for=" + v)}
			}), "ip:10.0.0.1"},
		{"trusted proxy overwrites X-Real-IP: X-Forwarded-For spoofed", trustedRealIPOnly,
			rotate(proxy, spoofedAddresses, func(v string) []header {
				return []header{xff(v), forwarded("for=" + v), xRealIP("203.0.113.9")}
			}), "ip:203.0.113.9"},

		// IPv6 rotation inside one allocation.
		{"rotating addresses inside one IPv6 /64", open, []requestSpec{
			{remote: "[2001:db8:1:2::1]:1"}, {remote: "[2001:db8:1:2::2]:1"},
			{remote: "[2001:db8:1:2:ffff:ffff:ffff:ffff]:1"}, {remote: "[2001:db8:1:2:dead:beef:0:1]:2"},
		}, "ip6:2001:db8:1:2::/64"},
		{"rotating forwarded addresses inside one IPv6 /64", trusted,
			rotate("[2001:db8:ffff::1]:443", []string{"2001:db8:1:2::1", "2001:db8:1:2::abcd", "[2001:db8:1:2:1:2:3:4]:80"},
				func(v string) []header { return []header{xff("198.51.100.1, " + v)} }), "ip6:2001:db8:1:2::/64"},
		{"a 6to4 site rotating its 65,536 /64s, or its IPv4 host directly", open, []requestSpec{
			{remote: "[2002:cb00:7109::1]:1"}, {remote: "[2002:cb00:7109:1::1]:1"},
			{remote: "[2002:cb00:7109:ffff:ffff:ffff:ffff:ffff]:1"}, {remote: "[2002:cb00:7109:beef::2]:3"},
			{remote: "203.0.113.9:4"},
		}, "ip:203.0.113.9"},
		{"a Teredo client rotating its port and flags, or its IPv4 host directly", open, []requestSpec{
			{remote: "[2001:0:4136:e378:8000:63bf:34f6:8ef6]:1"}, {remote: "[2001:0:4136:e378:0:1:34f6:8ef6]:1"},
			{remote: "[2001:0:c633:6401:8000:ffff:34f6:8ef6]:1"}, {remote: "203.9.113.9:2"},
		}, "ip:203.9.113.9"},
		{"an IPv4 client through NAT64, forwarded or not", trusted, []requestSpec{
			{remote: "[64:ff9b::cb00:7109]:1"}, {remote: "[64:ff9b::203.0.113.9]:2"},
			{remote: proxy, headers: []header{xff("64:ff9b::cb00:7109")}},
		}, "ip:203.0.113.9"},

		// One address, several spellings.
		{"IPv4-mapped IPv6 is IPv4", trusted, []requestSpec{
			{remote: "203.0.113.9:1"}, {remote: "[::ffff:203.0.113.9]:2"},
			{remote: proxy, headers: []header{xff("::ffff:203.0.113.9")}},
			{remote: proxy, headers: []header{forwarded(`for="[::ffff:203.0.113.9]:99"`), xff("203.0.113.9")}},
			{remote: "[::ffff:10.0.0.1]:443", headers: []header{xff("203.0.113.9")}},
		}, "ip:203.0.113.9"},
		{"zones are dropped", trusted, []requestSpec{
			{remote: "[fe80::1%eth0]:1"}, {remote: "[fe80::1%eth1]:1"}, {remote: "[fe80::1]:1"},
			{remote: proxy, headers: []header{xff("fe80::1%lo")}},
			{remote: proxy, headers: []header{xff("fe80::1, 2001:db8:ffff::1%eth0")}},
		}, "ip6:fe80::/64"},

		// Garbage falls back to the TCP peer.
		{"garbage X-Forwarded-For: the proxy", trusted,
			rotate(proxy, append([]string{"for=1.2.3.4"}, garbageValues...), func(v string) []header { return []header{xff(v)} }), "ip:10.0.0.1"},
		{"garbage Forwarded: the proxy", trustedForwardedOnly,
			rotate(proxy, garbageValues, func(v string) []header { return []header{forwarded(v)} }), "ip:10.0.0.1"},
		{"garbage Forwarded for: the proxy", trustedForwardedOnly,
			rotate(proxy, garbageValues, func(v string) []header { return []header{forwarded("for=" + v)} }), "ip:10.0.0.1"},
		{"garbage X-Real-IP: the proxy", trustedRealIPOnly,
			rotate(proxy, garbageValues, func(v string) []header { return []header{xRealIP(v)} }), "ip:10.0.0.1"},
		{"garbage left of the client", trusted,
			rotate(proxy, garbageValues, func(v string) []header { return []header{xff(v + ", 203.0.113.9")} }), "ip:203.0.113.9"},
		{"garbage without trusted proxies", open,
			rotate(attacker, garbageValues, func(v string) []header { return []header{xff(v), forwarded(v), xRealIP(v)} }), "ip:203.0.113.9"},

		// Huge headers.
		{"10k-hop X-Forwarded-For from an untrusted peer", trusted, []requestSpec{
			{remote: attacker, headers: []header{xff(tenThousandSpoofed)}},
			{remote: attacker, headers: []header{xff(tenThousandTrusted)}},
		}, "ip:203.0.113.9"},
		{"10k spoofed hops before the client", trusted, []requestSpec{
			{remote: proxy, headers: []header{xff(tenThousandSpoofed + ", 203.0.113.9")}},
			{remote: proxy, headers: []header{xff(tenThousandSpoofed), xff("203.0.113.9, 10.0.0.2")}},
		}, "ip:203.0.113.9"},
		{"10k spoofed Forwarded elements before the client", trustedForwardedOnly, []requestSpec{
			{remote: proxy, headers: []header{forwarded(tenThousandForwarded + ", for=203.0.113.9")}},
		}, "ip:203.0.113.9"},
		{"10k trusted hops: the cap's last hop, never further left", trusted, []requestSpec{
			// Hops are walked from the right; with DefaultMaxHops (16) the last one
			// examined is hop 10000-16 = 9984, 10.0.39.0 (9984 = 39*256 + 0).
			{remote: proxy, headers: []header{xff("198.51.100.1, " + tenThousandTrusted)}},
			{remote: proxy, headers: []header{xff("1.2.3.4, " + tenThousandTrusted)}},
		}, "ip:10.0.39.0"},
		{"10k empty entries: the proxy", trusted, []requestSpec{
			{remote: proxy, headers: []header{xff("198.51.100.1" + strings.Repeat(",", 10000))}},
			{remote: proxy, headers: []header{forwarded("for=198.51.100.1" + strings.Repeat(", ", 10000))}},
		}, "ip:10.0.0.1"},
	}
}

func TestSpoofingAttempts(t *testing.T) {
	for _, attempt := range spoofAttempts(t) {
		t.Run(attempt.name, func(t *testing.T) {
			c := mustClientIP(t, attempt.cfg)
			if len(attempt.requests) == 0 {
				t.Fatal("an attempt without requests tests nothing")
			}
			for i, spec := range attempt.requests {
				key, err := c.Key(newRequest(spec.remote, spec.headers...))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if key != attempt.want {
					t.Fatalf("request %d (%s, %s) yields key %q, want %q", i, spec.remote, describe(spec.headers), key, attempt.want)
				}
			}
		})
	}
}

// describe shortens header lines for a failure message.
func describe(headers []header) string {
	parts := make([]string, len(headers))
	for i, h := range headers {
		parts[i] = h.name + ": " + truncate(h.value, 80)
	}
	return strings.Join(parts, "; ")
}
