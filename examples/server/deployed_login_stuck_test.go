package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestClusterLoginStackOnAStuckMaster: the login stack on a 3-master Cluster, with
// the account, the addresses and the subnet on three different masters. After 2
// attempts at an account (5 a minute), four addresses of one /24, whose address
// state lives on one master, send wrong passwords every 5 ms; one master is
// stopped (SIGSTOP) for 1.5 s, then continued, and the attempts go on for 3 s.
//
// While the master is stuck, logins are decided from the last answers: the known
// address spends the account's 3 last attempts, and the addresses Redis never
// answered for are refused. On SIGCONT, the first admission charges Redis those 3
// (the settlement). Each router stops another master: with the addresses' one,
// logins that reached Redis while that charge was on its way were admitted by a
// Redis that did not hold it yet (6–7 attempts of 5); with the account's one, whose
// breaker opens, a login refused for the local allowance ended the settlement while
// another, admitted by Redis, was still settling (6 of 5). So the account admits at
// most 5 attempts in all, every answer is 401 or 429, and afterwards a fresh account
// from each address is admitted: Redis decides again.
func TestClusterLoginStackOnAStuckMaster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	for n, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			srv := clusterServer(t, cluster, router, "-on-store-error", "local")
			followWallClock(t, srv.clock)
			account, perIP, perSubnet := srv.app.login[0], srv.app.login[1], srv.app.login[2]

			subnet := fmt.Sprintf("127.%d.1", 20+n)
			subnetOn := masterIndex(t, cluster, stateKey(perSubnet, "net4:"+subnet+".0/24"))
			user, accountOn := "", subnetOn
			for i := 0; accountOn == subnetOn; i++ {
				user = fmt.Sprintf("victim%d", i)
				accountOn = masterIndex(t, cluster, stateKey(account, "field:username:"+user))
			}
			stuckOn := 3 - subnetOn - accountOn
			var addrs []string
			for host := 2; host < 250 && len(addrs) < 4; host++ {
				if ip := fmt.Sprintf("%s.%d", subnet, host); masterIndex(t, cluster, stateKey(perIP, "ip:"+ip)) == stuckOn {
					addrs = append(addrs, ip)
				}
			}
			if len(addrs) != 4 {
				t.Fatalf("addresses of %s.0/24 on master %d: %v, want 4", subnet, stuckOn, addrs)
			}
			clients := map[string]*http.Client{}
			for _, ip := range addrs {
				clients[ip] = client(t, ip)
			}
			for i := range 2 {
				if r := do(t, clients[addrs[0]], http.MethodPost, srv.url+"/login", loginForm(user, "guess")); r.status != http.StatusUnauthorized {
					t.Fatalf("attempt %d before the outage: %d, want 401", i+1, r.status)
				}
			}

			// Each router stops another of the three: the addresses', the account's
			// or the subnet's master.
			stoppedRole, stopped := []string{"addresses'", "account's", "subnet's"}[n%3], []int{stuckOn, accountOn, subnetOn}[n%3]
			stuck := cluster.Servers[stopped]
			if err := stuck.Pause(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stuck.Resume() })
			var admitted, refused, other atomic.Int64
			var failures sync.Map // error text → struct{}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for _, ip := range addrs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tick := time.NewTicker(5 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
						}
						status, err := postForm(clients[ip], srv.url+"/login", loginForm(user, "guess"))
						switch {
						case err != nil:
							failures.Store(err.Error(), struct{}{})
						case status == http.StatusUnauthorized:
							admitted.Add(1)
						case status == http.StatusTooManyRequests:
							refused.Add(1)
						default:
							other.Add(1)
						}
					}
				}()
			}
			time.Sleep(1500 * time.Millisecond)
			if err := stuck.Resume(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second)
			close(stop)
			wg.Wait()

			t.Logf("%s: account on master %d, subnet on %d, addresses on %d; the %s master stopped 1.5 s: %d attempts admitted of 5, %d refused",
				router, accountOn, subnetOn, stuckOn, stoppedRole, admitted.Load()+2, refused.Load())
			failures.Range(func(k, _ any) bool { t.Errorf("a request failed: %v", k); return true })
			if n := other.Load(); n != 0 {
				t.Errorf("%d answers neither 401 nor 429", n)
			}
			if got := admitted.Load() + 2; got > 5 {
				t.Errorf("the account admitted %d attempts, want at most 5", got)
			}
			for _, ip := range addrs {
				r := do(t, clients[ip], http.MethodPost, srv.url+"/login", loginForm("fresh-"+ip, "guess"))
				if r.status != http.StatusUnauthorized {
					t.Errorf("a fresh account from %s after the outage: %d %s, want 401 (admitted)", ip, r.status, r.body)
				}
				t.Logf("%s: a fresh account from %s then: RateLimit %q", router, ip, r.header.Get("RateLimit"))
			}
		})
	}
}

// postForm posts form to target and returns the status, reading the body; for the
// goroutines of a test, which must not stop it.
func postForm(c *http.Client, target string, form url.Values) (int, error) {
	resp, err := c.Post(target, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
