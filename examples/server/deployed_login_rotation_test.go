package main

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestClusterUsernameRotationThroughAStuckMaster: credential stuffing, one
// address trying a new username with every request, so that every login is an
// account Redis has never seen, against the login stack on a 3-master Cluster
// with one master stopped (SIGSTOP) for 1.5 s and then continued.
//
// The address has used 10 of its 20 attempts a minute before the stop; it then
// sends a login every 250 ms for 4.5 s, so that its budget outlasts the stop. Each router stops another master: the one
// holding the address's state, the subnet's, or neither (only some of the invented
// accounts live on it). However the invented accounts fall, the address must get
// at most its 10 remaining attempts in all: a fresh account is no fresh budget, in
// Local mode, while slow calls are decided from the last answers, or on the
// return. Every answer is 401 or 429, and afterwards Redis decides again.
func TestClusterUsernameRotationThroughAStuckMaster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	for n, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			srv := clusterServer(t, cluster, router, "-on-store-error", "local")
			followWallClock(t, srv.clock)
			perIP, perSubnet := srv.app.login[1], srv.app.login[2]
			prefix := fmt.Sprintf("127.%d.1", 30+n)
			subnetOn := masterIndex(t, cluster, stateKey(perSubnet, "net4:"+prefix+".0/24"))
			addrOn := (subnetOn + 1) % 3
			ip := addrsOn(t, cluster, perIP, prefix, addrOn, 1)[0]
			role, stoppedMaster := []string{"address's", "subnet's", "third"}[n%3], []int{addrOn, subnetOn, 3 - addrOn - subnetOn}[n%3]
			c := client(t, ip)
			var user atomic.Int64
			attempt := func() (int, error) {
				return postForm(c, srv.url+"/login", loginForm(fmt.Sprintf("invented-%d", user.Add(1)), "guess"))
			}
			for i := range 10 {
				if status, err := attempt(); err != nil || status != http.StatusUnauthorized {
					t.Fatalf("attempt %d before the stop: %d, %v; want 401", i+1, status, err)
				}
			}

			stuck := cluster.Servers[stoppedMaster]
			if err := stuck.Pause(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stuck.Resume() })
			var admittedStopped atomic.Int64
			var stopped atomic.Bool
			stopped.Store(true)
			f := newLoginFlood()
			repeat(1, 250*time.Millisecond, f.stop, &f.wg, func() {
				status, err := attempt()
				f.record(status, err)
				if err == nil && status == http.StatusUnauthorized && stopped.Load() {
					admittedStopped.Add(1)
				}
			})
			time.Sleep(1500 * time.Millisecond)
			if err := stuck.Resume(); err != nil {
				t.Fatal(err)
			}
			stopped.Store(false)
			time.Sleep(3 * time.Second)
			f.end(t)

			t.Logf("%s: address on master %d, subnet on %d; the %s master (%d) stopped 1.5 s: %d invented accounts, %d admitted of the 10 left (%d while stopped), %d refused",
				router, addrOn, subnetOn, role, stoppedMaster, user.Load()-10, f.admitted.Load(), admittedStopped.Load(), f.refused.Load())
			if f.admitted.Load() > 10 {
				t.Errorf("the address was admitted %d logins after its 10, want at most the 10 left of its 20 a minute", f.admitted.Load())
			}
			// Redis decides again: a neighbour of the same /24 is admitted.
			neighbour := fmt.Sprintf("%s.%d", prefix, 251)
			if status, err := postForm(client(t, neighbour), srv.url+"/login", loginForm("after", "guess")); err != nil || status != http.StatusUnauthorized {
				t.Errorf("a login from %s afterwards: %d, %v; want 401 (admitted)", neighbour, status, err)
			}
		})
	}
}
