// Command login protects a login form with a stack decided all-or-nothing: 5
// attempts per minute per account, 20 per client IP and 100 per subnet (/24 for
// IPv4, /56 for IPv6). A refused attempt spends nothing, so an attacker who has
// exhausted an IP's budget cannot lock the account's owner out.
//
//	go run ./examples/login
//	curl -i -d username=alice -d password=correct-horse localhost:8080/login
package main

import (
	"io"
	"log"
	"net/http"

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
	limit, err := nethttp.New(store, httplimit.Stack(
		httplimit.Limit(core.MustPolicy("account", core.SlidingLog, core.PerMinute(5)), keyfuncs.FormField("username")),
		httplimit.Limit(core.MustPolicy("ip", core.SlidingWindow, core.PerMinute(20)), clientIP.Key),
		httplimit.Limit(core.MustPolicy("subnet", core.SlidingWindow, core.PerMinute(100)), subnet),
	))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /login", limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("password") != "correct-horse" {
			http.Error(w, "wrong username or password", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "welcome\n")
	})))
	return mux, nil
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	h, err := newHandler(store)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", h))
}
