package keyfuncs

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-ratelimit/ratelimit/core"
)

// fuzzTrusted is the trusted-proxy list of the fuzz tests.
const fuzzTrusted = "10.0.0.0/8, 2001:db8:ffff::/48"

// fuzzProxy is a trusted TCP peer.
const fuzzProxy = "10.0.0.1:443"

// checkAddr fails the test unless addr is a valid, normalized client address.
func checkAddr(t *testing.T, addr netip.Addr) {
	t.Helper()
	if !addr.IsValid() {
		t.Fatal("invalid address")
	}
	if addr.Is4In6() || addr.Zone() != "" {
		t.Fatalf("address %v is not normalized", addr)
	}
}

// checkKey fails the test unless key is a key every KeyFunc may return:
// 1 to MaxKeyLength bytes of valid UTF-8 without control characters.
func checkKey(t *testing.T, key string) {
	t.Helper()
	if len(key) == 0 || len(key) > core.MaxKeyLength {
		t.Fatalf("key length %d is outside 1..%d", len(key), core.MaxKeyLength)
	}
	if !utf8.ValidString(key) {
		t.Fatalf("key %q is not valid UTF-8", key)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("key %q holds a control character", key)
		}
	}
}

// checkIPKey fails the test unless key is the Key of addr. An IPv6 address that
// stands for an IPv4 host (NAT64, 6to4, Teredo: see Key) is keyed as that host.
func checkIPKey(t *testing.T, c *ClientIP, r *http.Request, addr netip.Addr) {
	t.Helper()
	key, err := c.Key(r)
	if err != nil {
		t.Fatalf("Key: %v", err)
	}
	checkKey(t, key)
	if host := keyedHost(addr); host.Is4() {
		if key != "ip:"+host.String() {
			t.Fatalf("key %q for %v", key, addr)
		}
		return
	}
	if addr.Is6() {
		block, err := netip.ParsePrefix(strings.TrimPrefix(key, "ip6:"))
		if err != nil || !strings.HasPrefix(key, "ip6:") || !block.Contains(addr) || block.Bits() != c.ipv6Prefix {
			t.Fatalf("key %q for %v", key, addr)
		}
	}
}

// nodePattern is an independent statement of the hop grammar parseNode
// accepts: an address, or one with a port (digits or an obfuscated "_id").
var nodePattern = regexp.MustCompile(`^(?:\[([^\]]*)\]|([^\[\]:]*))(?::(?:[0-9]{1,5}|_[A-Za-z0-9._-]+))?$`)

// referenceNode parses a hop with nodePattern and netip.
func referenceNode(s string) (netip.Addr, bool) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr.Unmap().WithZone(""), true
	}
	m := nodePattern.FindStringSubmatch(s)
	if m == nil {
		return netip.Addr{}, false
	}
	if m[1] != "" || strings.HasPrefix(s, "[") {
		addr, err := netip.ParseAddr(m[1])
		if err != nil || !addr.Is6() {
			return netip.Addr{}, false
		}
		return addr.Unmap().WithZone(""), true
	}
	addr, err := netip.ParseAddr(m[2])
	if err != nil || !addr.Is4() {
		return netip.Addr{}, false
	}
	return addr, true
}

// referenceXForwardedFor is a plain restatement of the X-Forwarded-For walk:
// split every line, concatenate, walk from the right.
func referenceXForwardedFor(c *ClientIP, lines []string) netip.Addr {
	var entries []string
	for _, line := range lines {
		entries = append(entries, strings.Split(line, ",")...)
	}
	var last netip.Addr
	hops := 0
	for i := len(entries) - 1; i >= 0 && hops < c.maxHops; i-- {
		hops++
		entry := strings.Trim(entries[i], " \t")
		if entry == "" {
			continue
		}
		addr, ok := referenceNode(entry)
		if !ok {
			break
		}
		last = addr
		if !c.trusts(addr) {
			break
		}
	}
	return last
}

func FuzzXForwardedFor(f *testing.F) {
	f.Add("203.0.113.9", "10.0.0.2", uint8(0))
	f.Add("198.51.100.1, 203.0.113.9", "", uint8(15))
	f.Add("1.2.3.4,, 10.0.0.3 ,10.0.0.2", "10.0.0.9", uint8(1))
	f.Add("[2001:db8::1]:443, ::ffff:10.0.0.5", "fe80::1%eth0", uint8(3))
	f.Add("unknown, 10.0.0.4", "_hidden", uint8(2))
	f.Add("203.0.113.9:_obf, 10.0.0.4:80", "2001:db8:ffff::1%lo", uint8(0))
	f.Add(strings.Repeat("10.0.0.1, ", 100), "10.0.0.2", uint8(31))
	f.Fuzz(func(t *testing.T, line1, line2 string, hops uint8) {
		c := mustClientIP(t, ClientIPConfig{
			TrustedProxies: prefixes(t, fuzzTrusted),
			Header:         XForwardedFor,
			MaxHops:        int(hops%32) + 1,
		})
		lines := []string{line1, line2}
		r := newRequest(fuzzProxy, xff(line1), xff(line2))
		got, err := c.Addr(r)
		if err != nil {
			t.Fatalf("Addr: %v", err)
		}
		checkAddr(t, got)
		want := referenceXForwardedFor(c, lines)
		if !want.IsValid() {
			want = netip.MustParseAddr("10.0.0.1")
		}
		if got != want {
			t.Fatalf("Addr = %v, reference walk = %v (lines %q)", got, want, lines)
		}
		checkIPKey(t, c, r, got)

		// A hop appended by the trusted proxy is read the same, whatever the
		// client wrote to its left.
		for _, appended := range []*http.Request{
			newRequest(fuzzProxy, xff(line1), xff(line2+", 203.0.113.77")),
			newRequest(fuzzProxy, xff(line1), xff(line2), xff("203.0.113.77")),
		} {
			if got, err := c.Addr(appended); err != nil || got != netip.MustParseAddr("203.0.113.77") {
				t.Fatalf("with the proxy's hop appended: Addr = %v, %v", got, err)
			}
		}
	})
}

func FuzzForwarded(f *testing.F) {
	f.Add("for=203.0.113.9", "for=10.0.0.2;proto=https")
	f.Add(`for="[2001:db8:cafe::17]:4711", For=198.51.100.1`, "")
	f.Add(`for=unknown, for="_hidden"`, `FOR="10.0.0.3:_x";by=10.0.0.1`)
	f.Add(`for="\"1.2.3.4", for=`, `host="a,b;c";for=10.0.0.9`)
	f.Add(`for="`, `;;,,`)
	f.Add(`for=1.2.3.4;for=5.6.7.8`, `for="[::ffff:10.0.0.1]"`)
	f.Fuzz(func(t *testing.T, line1, line2 string) {
		c := mustClientIP(t, ClientIPConfig{TrustedProxies: prefixes(t, fuzzTrusted), Header: Forwarded})
		r := newRequest(fuzzProxy, forwarded(line1), forwarded(line2))
		got, err := c.Addr(r)
		if err != nil {
			t.Fatalf("Addr: %v", err)
		}
		checkAddr(t, got)
		checkIPKey(t, c, r, got)
		if !strings.Contains(line1+line2, "=") && got != netip.MustParseAddr("10.0.0.1") {
			t.Fatalf("no parameter at all, yet Addr = %v", got)
		}
		// Elements appended by the trusted proxy are read the same, whatever
		// the client wrote to their left.
		cases := []struct {
			r    *http.Request
			want string
		}{
			{newRequest(fuzzProxy, forwarded(line1), forwarded(line2+", for=203.0.113.77;proto=https")), "203.0.113.77"},
			{newRequest(fuzzProxy, forwarded(line1), forwarded(line2), forwarded(`for="[2001:db8:1:2::77]:8080"`)), "2001:db8:1:2::77"},
			{newRequest(fuzzProxy, forwarded(line1+`, for="203.0.113.77", for=10.0.0.2`)), "203.0.113.77"},
		}
		for _, tc := range cases {
			if got, err := c.Addr(tc.r); err != nil || got != netip.MustParseAddr(tc.want) {
				t.Fatalf("with the proxy's elements appended: Addr = %v, %v; want %s", got, err, tc.want)
			}
		}
	})
}

func FuzzXRealIP(f *testing.F) {
	for _, seed := range []string{"203.0.113.9", "2001:db8::1", "[2001:db8::1]:80", "garbage", "", "1.2.3.4, 5.6.7.8", "::ffff:1.2.3.4"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		c := mustClientIP(t, ClientIPConfig{TrustedProxies: prefixes(t, fuzzTrusted), Header: XRealIP})
		r := newRequest(fuzzProxy, xRealIP(value))
		got, err := c.Addr(r)
		if err != nil {
			t.Fatalf("Addr: %v", err)
		}
		checkAddr(t, got)
		checkIPKey(t, c, r, got)
		want, ok := referenceNode(strings.Trim(value, " \t"))
		if !ok {
			want = netip.MustParseAddr("10.0.0.1")
		}
		if got != want {
			t.Fatalf("Addr = %v, want %v", got, want)
		}
	})
}

func FuzzClientIP(f *testing.F) {
	f.Add("203.0.113.9:1", "198.51.100.1", "for=198.51.100.2", "198.51.100.3", uint8(0), false)
	f.Add("10.0.0.1:1", "198.51.100.1, 10.0.0.2", "for=198.51.100.2", "198.51.100.3", uint8(1), false)
	f.Add("[2001:db8:ffff::1]:443", "2001:db8:1:2::3", `for="[2001:db8::4]"`, "", uint8(2), true)
	f.Add("[fe80::1%eth0]:80", "", "", "", uint8(3), false)
	f.Add("[::ffff:10.0.0.1]:80", "garbage", "for=unknown", "x", uint8(4), true)
	f.Add("", "1.2.3.4", "", "", uint8(5), false)
	f.Add("@", "", "", "", uint8(0), false)
	f.Fuzz(func(t *testing.T, remote, xffLine, forwardedLine, realIPLine string, order uint8, trustAll bool) {
		headers := []Header{0, XForwardedFor, Forwarded, XRealIP}
		cfg := ClientIPConfig{TrustedProxies: prefixes(t, fuzzTrusted), Header: headers[int(order)%len(headers)], IPv6Prefix: 56}
		if trustAll {
			cfg.TrustedProxies = prefixes(t, "0.0.0.0/0, ::/0")
		}
		c := mustClientIP(t, cfg)
		r := newRequest(remote, xff(xffLine), forwarded(forwardedLine), xRealIP(realIPLine))
		got, err := c.Addr(r)
		peer, peerOK := referenceNode(remote)
		if err != nil {
			if !errors.Is(err, ErrNoClientIP) || peerOK {
				t.Fatalf("Addr(%q): %v", remote, err)
			}
			if _, err := c.Key(r); !errors.Is(err, ErrNoClientIP) {
				t.Fatalf("Key: %v, want ErrNoClientIP", err)
			}
			return
		}
		if !peerOK {
			t.Fatalf("Addr(%q) = %v, but the RemoteAddr is not an address", remote, got)
		}
		checkAddr(t, got)
		checkIPKey(t, c, r, got)
		if !c.trusts(peer) && got != peer {
			t.Fatalf("untrusted peer %v, yet Addr = %v", peer, got)
		}
		subnet, err := c.Subnet(24, 48)
		if err != nil {
			t.Fatal(err)
		}
		key, err := subnet(r)
		if err != nil {
			t.Fatalf("Subnet: %v", err)
		}
		checkKey(t, key)
		if !strings.HasPrefix(key, "net4:") && !strings.HasPrefix(key, "net6:") {
			t.Fatalf("subnet key %q", key)
		}
	})
}

func FuzzParseTrustedProxies(f *testing.F) {
	for _, seed := range []string{"", "10.0.0.0/8,192.0.2.1", "::ffff:10.0.0.0/104", "fe80::1%eth0", "1.2.3.4/33", ",,", "::/0, 0.0.0.0/0"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, csv string) {
		got, err := ParseTrustedProxies(csv)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "keyfuncs: trusted proxy ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() || p.Addr().Zone() != "" {
				t.Fatalf("prefix %v is not valid and masked", p)
			}
		}
		if _, err := NewClientIP(ClientIPConfig{TrustedProxies: got}); err != nil {
			t.Fatalf("NewClientIP rejects parsed proxies: %v", err)
		}
	})
}

func FuzzKeyValues(f *testing.F) {
	for _, seed := range []string{"alice", "", "a|b", "h:x", "a\x00b", "\xff", strings.Repeat("x", 600), "名前", "\u0085"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		ctx := context.WithValue(context.Background(), ctxKey{}, value)
		r := httptest.NewRequest(http.MethodPost, "/?name="+url.QueryEscape(value), strings.NewReader("name="+url.QueryEscape(value)))
		r.Header.Set("Content-Type", formType)
		r.Header.Set("X-API-Key", value)
		r = r.WithContext(ctx)
		fns := map[string]KeyFunc{
			"user":  User(ctxKey{}),
			"query": Query("name"),
			"form":  FormField("name"),
			"route": RoutePattern(func(*http.Request) string { return value }),
			"join":  Join(User(ctxKey{}), Query("name")),
		}
		for name, fn := range fns {
			key, err := fn(r)
			if err != nil {
				if !errors.Is(err, ErrNoKey) {
					t.Fatalf("%s: %v", name, err)
				}
				continue
			}
			checkKey(t, key)
		}
		if value != "" {
			key, err := Const(value)(r)
			if err != nil {
				t.Fatal(err)
			}
			checkKey(t, key)
		}
		if key, err := User(ctxKey{})(r); err == nil && key != "user:"+value && key != "user:"+hashed(value) {
			t.Fatalf("user key %q is neither the value nor its hash", key)
		}
	})
}

var apiKeyPattern = regexp.MustCompile(`^ak:[0-9a-f]{32}$`)

// FuzzValidAPIKey checks that any header value gives ErrNoKey when blank, the
// hash of the trimmed secret when the validator accepts it, and
// ErrUnknownAPIKey (never a key of its own) when it does not.
func FuzzValidAPIKey(f *testing.F) {
	for _, seed := range []string{"s3cr3t", "k3y", "", " ", strings.Repeat("k", 6<<10), "\x00"} {
		f.Add(seed)
	}
	accepted := func(key string) bool { return strings.HasPrefix(key, "k") }
	apiKey := ValidAPIKey("X-API-Key", func(_ context.Context, key string) (bool, error) { return accepted(key), nil })
	f.Fuzz(func(t *testing.T, secret string) {
		r := newRequest("203.0.113.9:1", header{"X-API-Key", secret})
		key, err := apiKey(r)
		trimmed := strings.TrimSpace(secret)
		switch {
		case trimmed == "":
			if key != "" || !errors.Is(err, ErrNoKey) || errors.Is(err, ErrUnknownAPIKey) {
				t.Fatalf("blank secret: %q, %v", key, err)
			}
		case !accepted(trimmed):
			if key != "" || !errors.Is(err, ErrUnknownAPIKey) {
				t.Fatalf("unknown secret: %q, %v; want ErrUnknownAPIKey", key, err)
			}
		default:
			if err != nil || !apiKeyPattern.MatchString(key) {
				t.Fatalf("ValidAPIKey = %q, %v", key, err)
			}
			if key != "ak:"+HashSecret(trimmed) {
				t.Fatalf("ValidAPIKey = %q, not the hash of the secret", key)
			}
		}
	})
}

func FuzzFormField(f *testing.F) {
	mp, mpType := multipartBody(f, "username", "alice")
	f.Add([]byte("username=alice&password=x"), formType, "POST", "username=q")
	f.Add([]byte(mp), mpType, "POST", "")
	f.Add([]byte("username=%zz;&&="), formType+"; charset=utf-8", "PUT", "")
	f.Add([]byte("--x\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nbob\r\n--x--"), "multipart/form-data; boundary=x", "GET", "a=b")
	f.Fuzz(func(t *testing.T, body []byte, contentType, method, rawQuery string) {
		if !validMethod(method) {
			method = http.MethodPost
		}
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Method = method
		r.URL.RawQuery = rawQuery
		r.Header.Set("Content-Type", contentType)
		key, err := FormField("username")(r)
		switch {
		case err == nil:
			checkKey(t, key)
			if !strings.HasPrefix(key, "field:username:") {
				t.Fatalf("key %q", key)
			}
			want := r.FormValue("username")
			if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
				want = r.PostFormValue("username")
			}
			if key != boundKey("field:username:"+safeValue(want)) {
				t.Fatalf("key %q, the handler acts on %q", key, want)
			}
		case errors.Is(err, ErrNoKey), errors.Is(err, ErrFormTooLarge), errors.Is(err, ErrBadForm):
		default:
			t.Fatalf("FormField: %v", err)
		}
	})
}

// validMethod reports whether m is an HTTP token, as a method must be.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
