package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// admittedOf sends n requests to /api/resource, the i-th with the headers
// headersFor(i) returns, and counts the admitted ones.
func admittedOf(t *testing.T, n int, send func(i int) response) int {
	t.Helper()
	admitted := 0
	for i := range n {
		switch r := send(i); r.status {
		case http.StatusOK:
			admitted++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("request %d: status %d", i, r.status)
		}
	}
	return admitted
}

func TestSpoofingGainsNothing(t *testing.T) {
	const limit = 6
	args := []string{"-algorithm", "fixed_window", "-limit", "6", "-period", "1m"}
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			t.Run("no trusted proxy, rotating forwarding headers", func(t *testing.T) {
				srv := startServer(t, router, args...)
				c := client(t, "127.0.0.1")
				got := admittedOf(t, 3*limit, func(i int) response {
					return do(t, c, http.MethodGet, srv.url+"/api/resource", nil,
						"X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i),
						"X-Real-IP", fmt.Sprintf("198.51.100.%d", i),
						"Forwarded", fmt.Sprintf("for=192.0.2.%d", i))
				})
				if got != limit {
					t.Fatalf("rotating X-Forwarded-For/X-Real-IP/Forwarded won %d admissions, want %d", got, limit)
				}
			})
			t.Run("behind a trusted proxy, rotating the leftmost hop", func(t *testing.T) {
				srv := startServer(t, router, append(args, "-trusted-proxies", "127.0.0.1/32")...)
				proxy := client(t, "127.0.0.1")
				got := admittedOf(t, 3*limit, func(i int) response {
					return do(t, proxy, http.MethodGet, srv.url+"/api/resource", nil,
						"X-Forwarded-For", fmt.Sprintf("10.%d.0.1, 198.51.100.7", i))
				})
				if got != limit {
					t.Fatalf("rotating the leftmost hop won %d admissions, want %d", got, limit)
				}
				// The proxy is believed: another client behind it has its own budget.
				if r := do(t, proxy, http.MethodGet, srv.url+"/api/resource", nil, "X-Forwarded-For", "198.51.100.8"); r.status != http.StatusOK {
					t.Fatalf("another client behind the proxy: %d, want 200", r.status)
				}
				// An untrusted peer's header is ignored: 127.0.0.2 is limited as itself.
				other := client(t, "127.0.0.2")
				got = admittedOf(t, 2*limit, func(i int) response {
					return do(t, other, http.MethodGet, srv.url+"/api/resource", nil, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", 100+i))
				})
				if got != limit {
					t.Fatalf("an untrusted peer forging X-Forwarded-For won %d admissions, want %d", got, limit)
				}
			})
			t.Run("rotating inside one IPv6 /64 behind a trusted proxy", func(t *testing.T) {
				srv := startServer(t, router, append(args, "-trusted-proxies", "127.0.0.1")...)
				proxy := client(t, "127.0.0.1")
				got := admittedOf(t, 3*limit, func(i int) response {
					return do(t, proxy, http.MethodGet, srv.url+"/api/resource", nil,
						"X-Forwarded-For", fmt.Sprintf("2001:db8:1:2:%x:%x::%x", (i*7919)&0xffff, i, i+1))
				})
				if got != limit {
					t.Fatalf("rotating inside a /64 won %d admissions, want %d", got, limit)
				}
				if r := do(t, proxy, http.MethodGet, srv.url+"/api/resource", nil, "X-Forwarded-For", "2001:db8:1:3::1"); r.status != http.StatusOK {
					t.Fatalf("the next /64: %d, want 200", r.status)
				}
			})
			t.Run("rotating inside one IPv6 /64 as the TCP peer", func(t *testing.T) {
				srv := startServer(t, router, args...)
				got := admittedOf(t, 3*limit, func(i int) response {
					return serveLocal(srv.handler, http.MethodGet, "/api/resource", fmt.Sprintf("[2001:db8:aa:bb:%x::%x]:%d", i, i+1, 40000+i))
				})
				if got != limit {
					t.Fatalf("rotating peers inside a /64 won %d admissions, want %d", got, limit)
				}
				// An IPv4-mapped peer is its IPv4 address.
				got = admittedOf(t, 2*limit, func(i int) response {
					peer := "192.0.2.9:1000"
					if i%2 == 1 {
						peer = "[::ffff:192.0.2.9]:1000"
					}
					return serveLocal(srv.handler, http.MethodGet, "/api/resource", peer)
				})
				if got != limit {
					t.Fatalf("alternating IPv4 and IPv4-mapped forms won %d admissions, want %d", got, limit)
				}
			})
		})
	}
}

func TestGarbageForwardingHeadersNever5xx(t *testing.T) {
	garbage := []string{
		"", " ", ",", ",,,,", "garbage", "unknown", "_hidden", "1.2.3.4.5", "256.256.256.256", "[::1", "::1]",
		"[2001:db8::1]:80", "2001:db8::1%eth0", "1.2.3.4:99999", "for=", `for="`, `for="[2001:db8::1`, `for=unknown`,
		`for=_x;by=_y;proto=https`, `for="[::ffff:1.2.3.4]:80", for=10.0.0.1`, "for=1.2.3.4;for=5.6.7.8", `for=";,="`,
		strings.Repeat("1.1.1.1, ", 500), strings.Repeat("for=1.1.1.1,", 500), strings.Repeat("[", 4000),
		"\u00e9\u00e8", "0x7f000001", "127.1", "::", "0.0.0.0", "-1.-1.-1.-1",
	}
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			for _, trusted := range []string{"", "127.0.0.0/8"} {
				srv := startServer(t, router, "-limit", "1000", "-trusted-proxies", trusted)
				c := client(t, "127.0.0.1")
				for _, g := range garbage {
					for _, header := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP"} {
						r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil, header, g)
						if r.status >= 500 {
							t.Fatalf("trusted %q, %s: %q: status %d", trusted, header, g, r.status)
						}
					}
				}
			}
		})
	}
}

func TestHugeAPIKey(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			key := strings.Repeat("s3cr3t-", 6000/7) + "A" // 6 kB
			other := key[:len(key)-1] + "B"
			srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "6", "-period", "1m",
				"-api-keys", key+","+other, "-log-level", "debug")
			c := client(t, "127.0.0.1")
			got := admittedOf(t, 10, func(int) response {
				return do(t, c, http.MethodGet, srv.url+"/api/resource", nil, "X-API-Key", key)
			})
			if got != 6 {
				t.Fatalf("a 6 kB API key was admitted %d times, want 6", got)
			}
			// Hashed, not truncated: a key differing in its last byte is another client.
			if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil, "X-API-Key", other); r.status != http.StatusOK {
				t.Fatalf("another 6 kB key: %d, want 200", r.status)
			}
			// Requests without a key are limited by IP, apart from the key holders.
			if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil); r.status != http.StatusOK {
				t.Fatalf("no key: %d, want 200", r.status)
			}
			metrics := do(t, c, http.MethodGet, srv.url+"/metrics", nil)
			for _, where := range []string{srv.logs.String(), metrics.body} {
				if strings.Contains(where, "s3cr3t") {
					t.Fatal("the raw API key reached the logs or the metrics")
				}
			}
			if want := "api.key=ak:" + keyfuncs.HashSecret(key); !strings.Contains(srv.logs.String(), want) {
				t.Errorf("decisions are not logged with the hashed key %s:\n%.2000s", want, srv.logs.String())
			}
		})
	}
}
