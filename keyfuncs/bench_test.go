package keyfuncs

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func BenchmarkClientIPKey(b *testing.B) {
	trusted := ClientIPConfig{TrustedProxies: prefixes(b, "10.0.0.0/8, 2001:db8:ffff::/48")}
	cases := []struct {
		name string
		cfg  ClientIPConfig
		r    *http.Request
		want string
	}{
		{"peer/IPv4", ClientIPConfig{}, newRequest("203.0.113.9:51234"), "ip:203.0.113.9"},
		{"peer/IPv6", ClientIPConfig{}, newRequest("[2001:db8:1:2::9]:51234"), "ip6:2001:db8:1:2::/64"},
		{"untrusted peer with XFF", trusted, newRequest("203.0.113.9:51234", xff("198.51.100.1, 198.51.100.2")), "ip:203.0.113.9"},
		{"XFF/3 hops", trusted, newRequest("10.0.0.1:443", xff("198.51.100.1, 203.0.113.9, 10.0.0.2")), "ip:203.0.113.9"},
		{"XFF/16 trusted hops", trusted, newRequest("10.0.0.1:443", xff(strings.Repeat("10.0.0.3, ", 20)+"10.0.0.2")), "ip:10.0.0.3"},
		{"Forwarded/2 elements", ClientIPConfig{TrustedProxies: trusted.TrustedProxies, Header: Forwarded}, newRequest("10.0.0.1:443", forwarded(`for=203.0.113.9;proto=https, for="[2001:db8:ffff::2]:80"`)), "ip:203.0.113.9"},
		{"X-Real-IP", ClientIPConfig{TrustedProxies: trusted.TrustedProxies, Header: XRealIP}, newRequest("10.0.0.1:443", xRealIP("203.0.113.9")), "ip:203.0.113.9"},
	}
	for _, tc := range cases {
		c := mustClientIP(b, tc.cfg)
		if key, err := c.Key(tc.r); err != nil || key != tc.want {
			b.Fatalf("%s: Key = %q, %v; want %q", tc.name, key, err, tc.want)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Key(tc.r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// Every request from a peer not seen before (a new connection each time): the
	// peer cache misses, and the address is parsed and the key built.
	b.Run("peer/IPv4/new peers", func(b *testing.B) {
		c := mustClientIP(b, ClientIPConfig{})
		reqs := make([]*http.Request, 1<<14)
		for i := range reqs {
			reqs[i] = newRequest(fmt.Sprintf("198.51.%d.%d:%d", i>>8&0x3f, i&0xff, 1024+i))
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := c.Key(reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("XFF/3 hops/parallel", func(b *testing.B) {
		c := mustClientIP(b, trusted)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			r := newRequest("10.0.0.1:443", xff("198.51.100.1, 203.0.113.9, 10.0.0.2"))
			for pb.Next() {
				if _, err := c.Key(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

func BenchmarkValidAPIKey(b *testing.B) {
	for _, tc := range []struct {
		name string
		size int
	}{{"32B", 32}, {"64B", 64}, {"6kB", 6 << 10}} {
		secret := strings.Repeat("k", tc.size)
		r := newRequest("203.0.113.9:1", header{"X-API-Key", secret})
		apiKey := ValidAPIKey("X-API-Key", APIKeySet(secret))
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(tc.size))
			for b.Loop() {
				if _, err := apiKey(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("32B/parallel", func(b *testing.B) {
		apiKey := ValidAPIKey("X-API-Key", APIKeySet(strings.Repeat("k", 32)))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			r := newRequest("203.0.113.9:1", header{"X-API-Key", strings.Repeat("k", 32)})
			for pb.Next() {
				if _, err := apiKey(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

func BenchmarkFirstOfAPIKeyOrClientIP(b *testing.B) {
	c := mustClientIP(b, ClientIPConfig{})
	key := FirstOf(ValidAPIKey("X-API-Key", APIKeySet("demo-key")), c.Key)
	r := newRequest("203.0.113.9:1")
	if got, err := key(r); err != nil || got != "ip:203.0.113.9" {
		b.Fatalf("key = %q, %v", got, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := key(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormField(b *testing.B) {
	username := FormField("username")
	b.ReportAllocs()
	for b.Loop() {
		r := formRequest(http.MethodPost, "/login", formType, "username=alice&password=correct-horse")
		if _, err := username(r); err != nil {
			b.Fatal(err)
		}
	}
}
