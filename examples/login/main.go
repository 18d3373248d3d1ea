// Command login protects a login form with a stack decided all-or-nothing: 5
// attempts per minute per account, 20 per client IP and 100 per subnet (/24 for
// IPv4, /56 for IPv6). A refused attempt spends nothing, so an attacker who has
// exhausted an IP's budget cannot lock the account's owner out.
//
// The account is the username from the body (as r.PostFormValue reads it),
// case-folded and normalised (keyfuncs.NormalizeUsername), so "Alice" and "ALICE"
// share alice's budget; a ?username= decoy in the query beside it is refused (400).
// The handler looks the account up by the same normalised name. Bodies are bounded
// before anything reads them.
//
//	go run ./examples/login
//	curl -i -d username=alice -d password=correct-horse localhost:8080/login
package main

import (
	"io"
	"log"
	"net/http"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

func newHandler(store core.Store) (http.Handler, error) {
	clientIP, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{}) // list your proxies in TrustedProxies
	if err != nil {
		return nil, err
	}
	subnet, err := clientIP.Subnet(24, 56)
	if err != nil {
		return nil, err
	}
	// A login without its username form field is refused (400): no JSON body or
	// other spelling reaches the password check outside the account's budget.
	namedOnly := httplimit.WithKeyFallback(httplimit.RefuseFallback())
	limit, err := nethttp.New(store, httplimit.Stack(
		httplimit.Limit(core.MustPolicy("account", core.SlidingLog, core.PerMinute(5)), keyfuncs.FormUsername("username")),
		httplimit.Limit(core.MustPolicy("ip", core.SlidingWindow, core.PerMinute(20)), clientIP.Key),
		httplimit.Limit(core.MustPolicy("subnet", core.SlidingWindow, core.PerMinute(100)), subnet),
	), namedOnly)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /login", boundBody(limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form cannot be parsed", http.StatusBadRequest)
			return
		}
		account, err := keyfuncs.NormalizeUsername(r.PostFormValue("username"))
		if err != nil || r.PostFormValue("password") != "correct-horse" {
			http.Error(w, "wrong username or password", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "welcome, "+account+"\n")
	}))))
	return mux, nil
}

// boundBody caps the body at 64 KiB before the limiter or the handler reads it.
func boundBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		next.ServeHTTP(w, r)
	})
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	h, err := newHandler(store)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Addr:              "127.0.0.1:8080",
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second, // a stalled body is cut off
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	log.Fatal(srv.ListenAndServe())
}
