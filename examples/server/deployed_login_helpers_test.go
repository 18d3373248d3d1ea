package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// Helpers of the login-stack tests on a Cluster: an account, four addresses of one
// /24 and that /24, placed on chosen masters, and a flood of wrong passwords.

// loginTarget is an account and the addresses that attack it, with the masters
// their login state lives on.
type loginTarget struct {
	user                        string
	addrs                       []string
	clients                     map[string]*http.Client
	accountOn, subnetOn, addrOn int
}

// placeLogin finds, in the /24 of subnet ("127.21.1"), an account and four
// addresses whose login state lives on three different masters: the subnet's, the
// account's, and one that holds all four addresses' state.
func placeLogin(t *testing.T, cluster *redistest.Cluster, srv *testServer, subnet string) loginTarget {
	t.Helper()
	account, perIP, perSubnet := srv.app.login[0], srv.app.login[1], srv.app.login[2]
	lt := loginTarget{clients: map[string]*http.Client{}}
	lt.subnetOn = masterIndex(t, cluster, stateKey(perSubnet, "net4:"+subnet+".0/24"))
	lt.accountOn = (lt.subnetOn + 1) % 3
	lt.user = accountOn(t, cluster, account, "victim", lt.accountOn)
	lt.addrOn = 3 - lt.subnetOn - lt.accountOn
	lt.addrs = addrsOn(t, cluster, perIP, subnet, lt.addrOn, 4)
	for _, ip := range lt.addrs {
		lt.clients[ip] = client(t, ip)
	}
	return lt
}

// addrsOn is n addresses of the /24 subnet ("127.21.1") whose state of policy perIP
// lives on master.
func addrsOn(t *testing.T, cluster *redistest.Cluster, perIP core.Policy, subnet string, master, n int) []string {
	t.Helper()
	var addrs []string
	for host := 2; host < 250 && len(addrs) < n; host++ {
		if ip := fmt.Sprintf("%s.%d", subnet, host); masterIndex(t, cluster, stateKey(perIP, "ip:"+ip)) == master {
			addrs = append(addrs, ip)
		}
	}
	if len(addrs) != n {
		t.Fatalf("addresses of %s.0/24 on master %d: %v, want %d", subnet, master, addrs, n)
	}
	return addrs
}

// twoAttempts makes, from the first address, the 2 attempts at the account that
// come before the outage.
func (lt *loginTarget) twoAttempts(t *testing.T, srv *testServer) {
	t.Helper()
	for i := range 2 {
		if r := lt.login(t, srv, lt.addrs[0], lt.user, "guess"); r.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d before the outage: %d, want 401", i+1, r.status)
		}
	}
}

// masterToFail is the master that the nth router's subtest fails, in turn the
// addresses', the account's and the subnet's, and its role.
func (lt *loginTarget) masterToFail(n int) (role string, master int) {
	return []string{"addresses'", "account's", "subnet's"}[n%3], []int{lt.addrOn, lt.accountOn, lt.subnetOn}[n%3]
}

// accountOn is the first account prefix0, prefix1, … whose state of policy
// account lives on master.
func accountOn(t *testing.T, cluster *redistest.Cluster, account core.Policy, prefix string, master int) string {
	t.Helper()
	user, err := cluster.KeyOn(master, prefix, func(user string) string { return stateKey(account, "field:username:"+user) })
	if err != nil {
		t.Fatal(err)
	}
	return user
}

// login posts a login of user with password from ip.
func (lt *loginTarget) login(t *testing.T, srv *testServer, ip, user, password string) response {
	t.Helper()
	return do(t, lt.clients[ip], http.MethodPost, srv.url+"/login", loginForm(user, password))
}

// loginFlood counts the answers to a flood of wrong passwords at one account.
type loginFlood struct {
	admitted, refused, other atomic.Int64
	failures                 sync.Map // error text → struct{}
	stop                     chan struct{}
	wg                       sync.WaitGroup
}

// flood sends a wrong password for the account from each address every 5 ms until
// end is called.
func (lt *loginTarget) flood(srv *testServer) *loginFlood {
	f := newLoginFlood()
	for _, ip := range lt.addrs {
		f.send(lt.clients[ip], srv, lt.user)
	}
	return f
}

func newLoginFlood() *loginFlood { return &loginFlood{stop: make(chan struct{})} }

// send posts a wrong password for user to srv's /login through c every 5 ms, until
// end is called, and records the answers.
func (f *loginFlood) send(c *http.Client, srv *testServer, user string) {
	repeat(1, 5*time.Millisecond, f.stop, &f.wg, func() {
		f.record(postForm(c, srv.url+"/login", loginForm(user, "guess")))
	})
}

// record counts one answer of the flood: 401 admitted (a wrong password checked),
// 429 refused, anything else or a failed request an error for end to report.
func (f *loginFlood) record(status int, err error) {
	switch {
	case err != nil:
		f.failures.Store(err.Error(), struct{}{})
	case status == http.StatusUnauthorized:
		f.admitted.Add(1)
	case status == http.StatusTooManyRequests:
		f.refused.Add(1)
	default:
		f.other.Add(1)
	}
}

// end stops the flood and reports a request that failed, or was answered neither
// 401 nor 429, as an error of t.
func (f *loginFlood) end(t *testing.T) {
	t.Helper()
	close(f.stop)
	f.wg.Wait()
	f.failures.Range(func(k, _ any) bool { t.Errorf("a request failed: %v", k); return true })
	if n := f.other.Load(); n != 0 {
		t.Errorf("%d answers neither 401 nor 429", n)
	}
}

// postForm posts form to target and returns the status (see statusOf).
func postForm(c *http.Client, target string, form url.Values) (int, error) {
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return statusOf(c, req)
}

// freshAccountsAdmitted checks that a fresh account from each address is admitted
// (Redis decides again) and logs what the login policies then report.
func (lt *loginTarget) freshAccountsAdmitted(t *testing.T, srv *testServer, router string) {
	t.Helper()
	for _, ip := range lt.addrs {
		r := lt.login(t, srv, ip, "fresh-"+ip, "guess")
		if r.status != http.StatusUnauthorized {
			t.Errorf("a fresh account from %s afterwards: %d %s, want 401 (admitted)", ip, r.status, r.body)
		}
		t.Logf("%s: a fresh account from %s then: RateLimit %q", router, ip, r.header.Get("RateLimit"))
	}
}
