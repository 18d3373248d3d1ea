package keyfuncs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// A server behind a load balancer in 10.0.0.0/8 that appends to X-Forwarded-For.
func ExampleClientIP() {
	trusted, err := keyfuncs.ParseTrustedProxies("10.0.0.0/8")
	if err != nil {
		panic(err)
	}
	ip, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{TrustedProxies: trusted})
	if err != nil {
		panic(err)
	}

	// Through the load balancer: the client wrote "1.2.3.4"; the balancer
	// appended the address it saw.
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.7:40000"
	r.Header.Set("X-Forwarded-For", "1.2.3.4, 203.0.113.9")
	fmt.Println(ip.Key(r))

	// Straight from the internet: headers are not believed.
	r.RemoteAddr = "198.51.100.20:50000"
	fmt.Println(ip.Key(r))
	// Output:
	// ip:203.0.113.9 <nil>
	// ip:198.51.100.20 <nil>
}

// IPv6 clients are grouped by /64 by default, and IPv4-mapped addresses are IPv4.
func ExampleClientIP_Key() {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	for _, peer := range []string{"[2001:db8:1:2::1]:1000", "[2001:db8:1:2:ffff::9]:1000", "[::ffff:203.0.113.9]:1000"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		key, _ := ip.Key(r)
		fmt.Println(key)
	}
	// Output:
	// ip6:2001:db8:1:2::/64
	// ip6:2001:db8:1:2::/64
	// ip:203.0.113.9
}

// Subnet keys limit a whole network, as a third policy of a login stack.
func ExampleClientIP_Subnet() {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	subnet, err := ip.Subnet(24, 56)
	if err != nil {
		panic(err)
	}
	for _, peer := range []string{"203.0.113.9:1", "[2001:db8:1:2ff::1]:1"} {
		r := httptest.NewRequest("POST", "/login", nil)
		r.RemoteAddr = peer
		key, _ := subnet(r)
		fmt.Println(key)
	}
	// Output:
	// net4:203.0.113.0/24
	// net6:2001:db8:1:200::/56
}

func ExampleParseTrustedProxies() {
	prefixes, err := keyfuncs.ParseTrustedProxies("10.0.0.0/8, 192.0.2.1, 2001:db8::/32")
	fmt.Println(prefixes, err)
	_, err = keyfuncs.ParseTrustedProxies("10.0.0.0/8, proxy.internal")
	fmt.Println(err != nil)
	// Output:
	// [10.0.0.0/8 192.0.2.1/32 2001:db8::/32] <nil>
	// true
}

// The API key when the application accepts it, else the client's address: an
// invented key shares the bucket of the client's requests without a key.
func ExampleFirstOf() {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	key := keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", keyfuncs.APIKeySet("abc")), ip.Key)

	r := httptest.NewRequest("GET", "/api/resource", nil)
	r.RemoteAddr = "203.0.113.9:1"
	fmt.Println(key(r))
	r.Header.Set("X-API-Key", "abc")
	fmt.Println(key(r))
	r.Header.Set("X-API-Key", "invented")
	fmt.Println(key(r))
	// Output:
	// ip:203.0.113.9 <nil>
	// ak:ba7816bf8f01cfea414140de5dae2223 <nil>
	// ip:203.0.113.9 <nil>
}

func ExampleValidAPIKey() {
	valid := func(_ context.Context, key string) (bool, error) { return key == "abc", nil } // your key store
	apiKey := keyfuncs.ValidAPIKey("X-API-Key", valid)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-API-Key", "abc")
	key, _ := apiKey(r)
	fmt.Println(key, key == "ak:"+keyfuncs.HashSecret("abc"))
	r.Header.Set("X-API-Key", "guess")
	_, err := apiKey(r)
	fmt.Println(errors.Is(err, keyfuncs.ErrUnknownAPIKey), errors.Is(err, keyfuncs.ErrNoKey))
	// Output:
	// ak:ba7816bf8f01cfea414140de5dae2223 true
	// true true
}

type userKey struct{}

// The user set by an authentication middleware, per route.
func ExampleJoin() {
	key := keyfuncs.Join(keyfuncs.User(userKey{}), keyfuncs.Route())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), userKey{}, "alice"))
		fmt.Println(key(r))
	})
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/reports/7", nil))
	// Output: user:alice|route:GET /reports/{id} <nil>
}

// The account of a login form, read from the body as the handler reads it and
// normalised; the handler still reads the whole form. A second name beside it, in
// the URL query, is refused (400) rather than counted under either name.
func ExampleFormUsername() {
	account := keyfuncs.FormUsername("username")
	r := httptest.NewRequest("POST", "/login", strings.NewReader("username=Alice&password=correct-horse"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	fmt.Println(account(r))
	fmt.Println(r.PostFormValue("password"))

	decoy := httptest.NewRequest("POST", "/login?username=bob", strings.NewReader("username=Alice&password=guess"))
	decoy.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err := account(decoy)
	fmt.Println(errors.Is(err, keyfuncs.ErrBadForm))
	// Output:
	// field:username:alice <nil>
	// correct-horse
	// true
}

func ExampleNewClientIP() {
	_, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		IPv6Prefix:     130,
	})
	fmt.Println(err)
	// Output: keyfuncs: ClientIPConfig.IPv6Prefix is 130; want 1 to 128 (0 means 64)
}
