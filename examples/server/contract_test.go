package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// DESIGN.md's "The reference server" lists the flags with their defaults.
func TestFlagDefaults(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"-addr", cfg.addr, "127.0.0.1:8080"},
		{"-router", cfg.router, "chi"},
		{"-store", cfg.store, "memory"},
		{"-redis-addrs", len(cfg.redisAddrs), 0},
		{"-algorithm", cfg.algorithm, core.TokenBucket},
		{"-limit", cfg.limit, int64(10)},
		{"-period", cfg.period, time.Second},
		{"-burst", cfg.burst, int64(defaultBurst)},
		{"-on-store-error", cfg.onStoreError, "local"},
		{"-trusted-proxies", len(cfg.trustedProxies), 0},
		{"-forwarded-header", cfg.forwardedHeader, keyfuncs.XForwardedFor},
		{"-api-keys", strings.Join(cfg.apiKeys, ","), "demo-key"},
		{"-log-level", cfg.logLevel, slog.LevelInfo},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s defaults to %v, want %v", c.name, c.got, c.want)
		}
	}
	// The server has read, write and idle timeouts: a stalled body is cut off
	// within seconds (TestStalledBodiesAreCutOff drives it over TCP).
	hs := newHTTPServer(cfg, http.NotFoundHandler(), discardLogger())
	if hs.ReadHeaderTimeout != 5*time.Second || hs.ReadTimeout != 10*time.Second || hs.WriteTimeout != 30*time.Second || hs.IdleTimeout != time.Minute {
		t.Errorf("default timeouts: header %v, read %v, write %v, idle %v", hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout)
	}
	a, err := newApp(cfg, discardLogger(), hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := a.api.String(); !strings.Contains(got, "token_bucket") {
		t.Errorf("default policy %s, want a token bucket", got)
	}
}

// TestHealthzAndMetricsAreNeverLimited: with the client's "api" budget spent,
// /healthz and /metrics still answer 200 to GET and HEAD, carry no rate-limit
// field, and are not counted as decisions.
func TestHealthzAndMetricsAreNeverLimited(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "5", "-period", "1m")
			c := client(t, "127.0.0.1")
			if got := admittedOf(t, 6, func(int) response { return do(t, c, http.MethodGet, srv.url+"/api/resource", nil) }); got != 5 {
				t.Fatalf("admitted %d of 6, want 5", got)
			}
			before := do(t, c, http.MethodGet, srv.url+"/metrics", nil).body
			for i := range 200 {
				for _, method := range []string{http.MethodGet, http.MethodHead} {
					for _, path := range []string{"/healthz", "/metrics"} {
						r := do(t, c, method, srv.url+path, nil)
						if r.status != http.StatusOK || r.header.Get("RateLimit") != "" || r.header.Get("RateLimit-Policy") != "" || r.header.Get("Retry-After") != "" {
							t.Fatalf("%s %s #%d with the api budget spent: %d RateLimit %q", method, path, i, r.status, r.header.Get("RateLimit"))
						}
						if method == http.MethodGet && path == "/healthz" && r.body != "ok\n" {
							t.Fatalf("healthz body %q", r.body)
						}
					}
				}
			}
			after := do(t, c, http.MethodGet, srv.url+"/metrics", nil).body
			if decisions(before) != decisions(after) {
				t.Errorf("probing /healthz and /metrics changed the decision counts:\nbefore %s\nafter  %s", decisions(before), decisions(after))
			}
		})
	}
}

// decisions is the ratelimit_decisions_total samples of an exposition.
func decisions(exposition string) string {
	var lines []string
	for _, line := range strings.Split(exposition, "\n") {
		if strings.HasPrefix(line, "ratelimit_decisions_total{") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "; ")
}

// TestUnknownKeyOnReportCostsTheClientFive: /api/report shares the "api" bucket
// and costs 5, with an unknown key too: the 401 is charged 5 to the client
// address, so a client guessing keys on the report runs dry five times faster,
// and a known key's bucket is untouched.
func TestUnknownKeyOnReportCostsTheClientFive(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "12", "-period", "1m")
			c := client(t, "127.0.0.1")
			steps := []struct {
				path, key string
				status    int
				remaining int64
			}{
				{"/api/report", "guess-1", http.StatusUnauthorized, 7},
				{"/api/report", "guess-2", http.StatusUnauthorized, 2},
				{"/api/report", "guess-3", http.StatusTooManyRequests, 2},
				{"/api/resource", "", http.StatusOK, 1},
				{"/api/resource", "guess-4", http.StatusUnauthorized, 0},
				{"/api/resource", "guess-5", http.StatusTooManyRequests, 0},
				{"/api/report", "demo-key", http.StatusOK, 7},
			}
			for i, s := range steps {
				var headers []string
				if s.key != "" {
					headers = []string{"X-API-Key", s.key}
				}
				r := do(t, c, http.MethodGet, srv.url+s.path, nil, headers...)
				if r.status != s.status || remainingOf(r.header.Get("RateLimit"), "api") != s.remaining {
					t.Fatalf("step %d %s key %q: %d %q, want %d with r=%d", i+1, s.path, s.key, r.status, r.header.Get("RateLimit"), s.status, s.remaining)
				}
				if r.status == http.StatusUnauthorized {
					if p := r.problem(t); p.Status != http.StatusUnauthorized || r.header.Get("Content-Type") != "application/problem+json" {
						t.Fatalf("step %d: 401 %q %q is not a problem", i+1, r.header.Get("Content-Type"), r.body)
					}
				}
			}
		})
	}
}

// TestExportWorksAtMostFiveSeconds: ?ms= above 5000 works 5000 ms, and a
// negative or malformed ms is a 400.
func TestExportWorksAtMostFiveSeconds(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			go func() {
				for range srv.started {
				}
			}()
			c := client(t, "127.0.0.1")
			start := time.Now()
			r := do(t, c, http.MethodGet, srv.url+"/api/export?ms=3600000", nil)
			took := time.Since(start)
			if r.status != http.StatusOK || r.body != "exported in 5000 ms\n" || took < 5*time.Second || took > 9*time.Second {
				t.Fatalf("ms=3600000: %d %q after %v, want 200 after 5 s", r.status, r.body, took)
			}
			for _, ms := range []string{"-1", "1.5", "x", "9223372036854775808"} {
				if r := do(t, c, http.MethodGet, srv.url+"/api/export?ms="+url.QueryEscape(ms), nil); r.status != http.StatusBadRequest {
					t.Errorf("ms=%s: %d, want 400", ms, r.status)
				}
			}
		})
	}
}

// TestHugeAndOddUsernames: a 20 kB username in six spellings is one account
// (five attempts, then 429), as the handler knows it; usernames that are not
// valid UTF-8, or that PRECIS refuses, are 400 and charge nothing.
func TestHugeAndOddUsernames(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			base := strings.Repeat("zoë", 20_000/4)
			var alternating strings.Builder
			for i, r := range base {
				if i%3 == 0 {
					r = unicode.ToUpper(r)
				}
				alternating.WriteRune(r)
			}
			spellings := []string{base, strings.ToUpper(base), alternating.String(), norm.NFD.String(base), norm.NFD.String(strings.ToUpper(base)), base}
			checkOneAccount(t, srv.handler, "192.0.2.", spellings, loginPassword)
			// Greek final sigma, ß, full-width letters, the Kelvin sign: one account each.
			for _, group := range [][]string{
				{"ΟΔΟΣ", "οδος", "οδοσ", "Οδος", "ΟΔΟΣ", "οδος"},
				{"straße", "STRASSE", "strasse", "Straße", "STRAßE", "strasse"},
				{"ａｌｉｃｅ", "alice", "ＡＬＩＣＥ", "Alice", "ａｌｉｃｅ", "alice"},
				{"\u212Aelvin", "kelvin", "KELVIN", "Kelvin", "\u212Aelvin", "kelvin"},
			} {
				checkOneAccount(t, srv.handler, "198.51.100.", group, "guess")
			}
			// Refused names spend nothing of the client's ip or subnet budgets.
			const peer = "203.0.113.7:1000"
			for _, body := range []string{"username=al%FFice&password=x", "username=%C0%80&password=x", "username=a%00b&password=x",
				"username=%E2%80%8Balice&password=x", "username=alice%20&password=x", "username=" + strings.Repeat("%FF", 20_000) + "&password=x"} {
				for range 30 {
					if r := postLocal(srv.handler, "/login", peer, body); r.status != http.StatusBadRequest {
						t.Fatalf("%.40q: %d, want 400", body, r.status)
					}
				}
			}
			r := postLocal(srv.handler, "/login", peer, loginForm("carol", loginPassword).Encode())
			if r.status != http.StatusOK || r.header.Get("RateLimit") != `"account";r=4;t=60, "ip";r=19;t=60, "subnet";r=99;t=60` {
				t.Fatalf("after 180 refused names: %d %q, want 200 with every budget whole but one", r.status, r.header.Get("RateLimit"))
			}
		})
	}
}

// TestHugeForwardingHeadersGainNothing: 250 kB forwarding headers, rotated on
// every request, never give a client a bucket other than its own, and never a 5xx:
// from an untrusted peer every one is ignored; from a trusted proxy the hop it
// appended is the client, whatever the client wrote to its left.
func TestHugeForwardingHeadersGainNothing(t *testing.T) {
	const limit = 6
	huge := func(i int) []string {
		pad := strings.Repeat(fmt.Sprintf("10.%d.%d.%d, ", i%250, i%7, i%13), 250_000/16)
		return []string{
			"X-Forwarded-For", pad + "198.51.100.7",
			"Forwarded", strings.Repeat(fmt.Sprintf("for=10.%d.0.1;by=x, ", i), 250_000/20) + "for=198.51.100.7",
			"X-Real-IP", fmt.Sprintf("10.%d.0.%d", i%250, i%200) + strings.Repeat("x", 250_000),
		}
	}
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			for _, header := range []string{"x-forwarded-for", "forwarded", "x-real-ip"} {
				srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "6", "-period", "1m",
					"-trusted-proxies", "127.0.0.1/32", "-forwarded-header", header)
				untrusted := client(t, "127.0.0.2")
				got := admittedOf(t, 3*limit, func(i int) response {
					return do(t, untrusted, http.MethodGet, srv.url+"/api/resource", nil, huge(i)...)
				})
				if got != limit {
					t.Fatalf("-forwarded-header %s: an untrusted peer with huge rotating headers won %d admissions, want %d", header, got, limit)
				}
				if header == "x-real-ip" {
					continue // the proxy overwrites X-Real-IP: the client writes none of it
				}
				proxy := client(t, "127.0.0.1")
				got = admittedOf(t, 3*limit, func(i int) response {
					return do(t, proxy, http.MethodGet, srv.url+"/api/resource", nil, huge(i)...)
				})
				if got != limit {
					t.Fatalf("-forwarded-header %s: huge rotating text left of the proxy's hop won %d admissions, want %d", header, got, limit)
				}
			}
		})
	}
}

// TestMetricsAndInfoLogsHoldNoClientInput: after a flood of random identities on
// every route (addresses behind a trusted proxy, API keys, usernames, refused
// names, bodies that are not forms, bad export times), every metric label value
// is one of a fixed set, the series stay few, and the info log holds none of the
// clients' addresses, keys or names: only its summary lines.
func TestMetricsAndInfoLogsHoldNoClientInput(t *testing.T) {
	allowed := map[string]*regexp.Regexp{
		"policy": regexp.MustCompile(`^(api|export|account|ip|subnet)$`),
		"result": regexp.MustCompile(`^(allowed|denied|shadow_denied|uncharged|unenforced|unavailable|error)$`),
		"kind":   regexp.MustCompile(`^(ip|refuse|skip|timeout|unavailable|overload|permanent)$`),
		"reason": regexp.MustCompile(`^(key|policy|cost|store|canceled|other)$`),
		"store":  regexp.MustCompile(`^(memory|embedded|redis)$`),
		"to":     regexp.MustCompile(`^(open|closed|local|shared)$`),
		"le":     regexp.MustCompile(`^(\+Inf|[0-9.e+-]+)$`),
	}
	sample := regexp.MustCompile(`^([a-z_]+)(?:\{(.*)\})? \S+$`)
	label := regexp.MustCompile(`([a-z_]+)="((?:[^"\\]|\\.)*)"`)
	for _, store := range []string{"memory", "embedded"} {
		for _, router := range allRouters {
			t.Run(store+"/"+router, func(t *testing.T) {
				t.Parallel()
				srv := startServer(t, router, "-store", store, "-algorithm", "fixed_window", "-limit", "6", "-period", "1m",
					"-trusted-proxies", "127.0.0.1/32", "-log-level", "info")
				go func() {
					for range srv.started {
					}
				}()
				c := client(t, "127.0.0.1")
				var secrets []string
				for i := range 150 {
					ip := netip.AddrFrom4([4]byte{100, 64 + byte(i%50), byte(i * 7), byte(i*13 + 1)}).String()
					ip6 := fmt.Sprintf("2001:db8:%x:%x::%x", i, i*3, i+1)
					key := fmt.Sprintf("sk-%08x-secret", i*2654435761)
					user := fmt.Sprintf("user-%05d-name", i*7919)
					secrets = append(secrets, ip, ip6, key, user, "2001:db8:"+fmt.Sprintf("%x", i)+":")
					for _, fwd := range []string{ip, ip6} {
						do(t, c, http.MethodGet, srv.url+"/api/resource", nil, "X-Forwarded-For", fwd, "X-API-Key", key)
						do(t, c, http.MethodGet, srv.url+"/api/report", nil, "X-Forwarded-For", fwd)
					}
					do(t, c, http.MethodGet, srv.url+"/api/export?ms="+[]string{"0", "x", "-5"}[i%3], nil, "X-Forwarded-For", ip)
					do(t, c, http.MethodPost, srv.url+"/login", loginForm(user, "guess"), "X-Forwarded-For", ip)
					do(t, c, http.MethodPost, srv.url+"/login", loginForm(user+" x", "guess"), "X-Forwarded-For", ip)
					do(t, c, http.MethodPost, srv.url+"/login", url.Values{"password": {"x"}}, "X-Forwarded-For", ip)
					do(t, c, http.MethodGet, srv.url+"/api/"+user, nil, "X-Forwarded-For", ip)
				}
				srv.flushLogs()
				exposition := do(t, c, http.MethodGet, srv.url+"/metrics", nil).body
				series := 0
				for _, line := range strings.Split(exposition, "\n") {
					if line == "" || strings.HasPrefix(line, "#") {
						continue
					}
					m := sample.FindStringSubmatch(line)
					if m == nil {
						t.Fatalf("unparsed sample %q", line)
					}
					series++
					for _, l := range label.FindAllStringSubmatch(m[2], -1) {
						re, ok := allowed[l[1]]
						if !ok || !re.MatchString(l[2]) {
							t.Errorf("series %s has label %s=%q, not one of a fixed set", m[1], l[1], l[2])
						}
					}
				}
				t.Logf("%d series; info log after the flood:\n%s", series, srv.logs.String())
				if series > 80 {
					t.Errorf("%d series after 150 random clients, want a fixed few:\n%s", series, exposition)
				}
				logs := srv.logs.String()
				for _, where := range []struct{ name, text string }{{"metrics", exposition}, {"info log", logs}} {
					for _, s := range secrets {
						if strings.Contains(where.text, s) {
							t.Fatalf("the %s hold the client's %q", where.name, s)
						}
					}
				}
				if lines := strings.Count(logs, "\n"); lines > 5 {
					t.Errorf("%d info lines after the flood, want a summary and a few first-of-a-kind lines:\n%s", lines, logs)
				}
			})
		}
	}
}

// TestLoginSubnets: the login stack's subnet policy groups IPv4 clients by /24
// and IPv6 clients by /56 (the ip policy by /64), with IPv4-mapped clients as
// their IPv4 address: a hundred clients of one subnet, each under its own ip
// budget, spend the subnet's, and the next is refused by the subnet alone.
func TestLoginSubnets(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			for _, tc := range []struct {
				name  string
				peer  func(i int) string
				other string // a client just outside the subnet
			}{
				{"IPv4 /24", func(i int) string {
					if i%2 == 1 {
						return fmt.Sprintf("[::ffff:192.0.2.%d]:1000", i)
					}
					return fmt.Sprintf("192.0.2.%d:1000", i)
				}, "192.0.3.1:1000"},
				{"IPv6 /56", func(i int) string { return fmt.Sprintf("[2001:db8:1:%x::1]:1000", i) }, "[2001:db8:1:100::1]:1000"},
			} {
				for i := range 100 {
					if r := postLocal(srv.handler, "/login", tc.peer(i), loginForm(fmt.Sprintf("user%d", i), "guess").Encode()); r.status != http.StatusUnauthorized {
						t.Fatalf("%s: client %d: %d %q, want 401", tc.name, i, r.status, r.header.Get("RateLimit"))
					}
				}
				r := postLocal(srv.handler, "/login", tc.peer(100), loginForm("user100", "guess").Encode())
				if r.status != http.StatusTooManyRequests {
					t.Fatalf("%s: the 101st client: %d, want 429", tc.name, r.status)
				}
				if p := r.problem(t); len(p.Violated) != 1 || p.Violated[0] != "subnet" {
					t.Fatalf("%s: the 101st client refused by %v, want [subnet]", tc.name, p.Violated)
				}
				if r := postLocal(srv.handler, "/login", tc.other, loginForm("user101", "guess").Encode()); r.status != http.StatusUnauthorized {
					t.Fatalf("%s: a client of the next subnet: %d, want 401", tc.name, r.status)
				}
			}
		})
	}
}

// TestMissingUsernameFallsBackExplicitly: a login without a username is limited
// by the client address (never unlimited), and the fallback is counted in
// ratelimit_key_fallbacks_total and logged at debug, without the address.
func TestMissingUsernameFallsBackExplicitly(t *testing.T) {
	srv := startServer(t, "chi", "-log-level", "debug")
	c := client(t, "127.0.0.1")
	statuses := map[int]int{}
	for range 7 {
		statuses[do(t, c, http.MethodPost, srv.url+"/login", url.Values{"password": {"x"}}).status]++
	}
	if statuses[http.StatusUnauthorized] != 5 || statuses[http.StatusTooManyRequests] != 2 {
		t.Fatalf("7 logins without a username: %v, want 5 × 401 then 429 (the account policy keyed by the address)", statuses)
	}
	metrics := do(t, c, http.MethodGet, srv.url+"/metrics", nil).body
	if want := `ratelimit_key_fallbacks_total{kind="ip",policy="account"} 7`; !strings.Contains(metrics, want) {
		t.Errorf("metrics lack %s:\n%s", want, metrics)
	}
	line := grepLines(srv.logs.String(), "key fallback taken")
	if strings.Count(line, "key fallback taken") != 7 || !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, "policy=account") || strings.Contains(line, "127.0.0.1") {
		t.Errorf("want 7 debug lines naming the policy and not the address, got:\n%s", line)
	}
}
