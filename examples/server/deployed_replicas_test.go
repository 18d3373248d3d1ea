package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestReplicasShareAnAccountThroughAStuckRedis: two instances of the server, started
// with -replicas 2, over one standalone redis-server; nethttp beside chi, then gin
// beside echo. Each checks one wrong password for an account (5 a minute), so one
// last heard 4 left and the other 3. Redis is stopped (SIGSTOP) for 1.5 s while both
// send wrong passwords for the account every 5 ms, each from the address it already
// answered for; then it continues and the attempts go on for 1 s.
//
// The stop is shorter than a confirming probe's wait, so every decision in it is a
// slow call from the last answers, and each replica spends its half of what its own
// answer left: the account admits at most its 5 attempts in all. Each spending all
// of its last answer, the two replicas admitted 4 and 3 more during the stop.
func TestReplicasShareAnAccountThroughAStuckRedis(t *testing.T) {
	redis := redistest.StartServer(t)
	for n, pair := range [][2]string{{"nethttp", "chi"}, {"gin", "echo"}} {
		t.Run(pair[0]+"+"+pair[1], func(t *testing.T) {
			user := fmt.Sprintf("shared-victim-%d", n)
			flood := newLoginFlood()
			var replicas [2]*testServer
			var clients [2]*http.Client
			for i, router := range pair {
				replicas[i] = startServer(t, router, "-store", "redis", "-redis-addrs", redis.Addr, "-replicas", "2")
				followWallClock(t, replicas[i].clock)
				clients[i] = client(t, fmt.Sprintf("127.%d.1.%d", 50+n, 2+i))
				if status, err := postForm(clients[i], replicas[i].url+"/login", loginForm(user, "guess")); err != nil || status != http.StatusUnauthorized {
					t.Fatalf("%s: the attempt before the stop: %d, %v; want 401", router, status, err)
				}
			}
			if err := redis.Pause(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = redis.Resume() })
			for i := range replicas {
				flood.send(clients[i], replicas[i], user)
			}
			time.Sleep(1500 * time.Millisecond)
			during := flood.admitted.Load()
			if err := redis.Resume(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			flood.end(t)

			admitted := flood.admitted.Load() + 2
			t.Logf("%s+%s: %d attempts admitted of 5 (%d during the stop), %d refused", pair[0], pair[1], admitted, during, flood.refused.Load())
			if admitted > 5 {
				t.Errorf("the account admitted %d attempts through two replicas, want at most 5", admitted)
			}
			if during == 0 {
				t.Errorf("nothing was admitted during the stop: each replica's share of its last answer is 1")
			}
		})
	}
}
