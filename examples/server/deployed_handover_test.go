package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// handOverExportMillis is how long the exports admitted during the outage work: the
// longest the server allows, so that Redis is back while they still run.
const handOverExportMillis = exportMaxMillis

// TestDeployedLocalExportLeasesHandedOverOnReturn: the server with -store redis and
// -on-store-error local, on a standalone redis-server and on the master of a
// 3-master Cluster that holds the client's "export" key. Redis dies (SIGKILL); once
// /metrics shows policy "export" in its failure mode, one client starts two long
// exports, admitted by the local mode, and a third is refused (429). Redis restarts
// (empty) and the server returns to shared enforcement (/metrics); then, while the
// two exports still run:
//
//   - every further export of the client is refused (429), never admitted: Redis
//     counts the two leases the local mode granted (core/resilient's hand-over);
//   - Redis holds exactly those two leases in the client's key.
//
// After the two end (200): Redis holds no lease of the client (their releases went
// to Redis), exports are admitted again, two at a time (no slot is leaked) and not
// three, and then again. No answer is a 5xx, and the server logs no error.
func TestDeployedLocalExportLeasesHandedOverOnReturn(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		redis := redistest.StartServer(t)
		srv := startServer(t, "chi", "-store", "redis", "-redis-addrs", redis.Addr, "-on-store-error", "local")
		checkExportHandOver(t, srv, redis)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		cluster := redistest.StartCluster(t, 3)
		srv := clusterServer(t, cluster, "nethttp", "-on-store-error", "local")
		master := cluster.Servers[masterIndex(t, cluster, exportStateKey(handOverClientIP))]
		checkExportHandOver(t, srv, master)
	})
}

// handOverClientIP is the client of the hand-over scenario.
const handOverClientIP = "127.0.0.31"

// exportStateKey is the Redis key of policy "export"'s state for the client address
// ip: a list of "id expires cost" leases.
func exportStateKey(ip string) string {
	export := core.MustConcurrencyPolicy("export", exportMaxInFlight, exportLeaseExpiry)
	return redisstore.DefaultPrefix + "{" + export.ID() + ":ip:" + ip + "}"
}

// checkExportHandOver runs the scenario of
// TestDeployedLocalExportLeasesHandedOverOnReturn against srv, whose client's
// "export" key lives on redis, which it kills and restarts.
func checkExportHandOver(t *testing.T, srv *testServer, redis *redistest.Server) {
	followWallClock(t, srv.clock)
	begin := time.Now()
	key := exportStateKey(handOverClientIP)
	c := client(t, handOverClientIP)
	observer := client(t, "127.0.0.1")
	export := func(ms int) response {
		t.Helper()
		r := do(t, c, http.MethodGet, fmt.Sprintf("%s/api/export?ms=%d", srv.url, ms), nil)
		if r.status >= 500 {
			t.Fatalf("export ms=%d: %d %s", ms, r.status, strings.TrimSpace(r.body))
		}
		if r.status == http.StatusOK {
			waitStarted(t, srv)
		}
		return r
	}
	metricShows := func(line string) bool {
		return strings.Contains(do(t, observer, http.MethodGet, srv.url+"/metrics", nil).body, line)
	}
	// leases is how many leases Redis holds in the client's key (-1: not answered).
	leases := func() int64 {
		rc := redis.NewClient()
		defer rc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		value, err := rc.Get(ctx, key).Result()
		if errors.Is(err, goredis.Nil) {
			return 0
		} else if err != nil {
			t.Logf("GET %s: %v", key, err)
			return -1
		}
		return int64(strings.Count(value, ",") + 1) // "id expires cost" per lease, joined by commas
	}
	waitLeases := func(want int64, within time.Duration, when string) {
		t.Helper()
		var n int64
		for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
			if n = leases(); n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: Redis holds %d leases of the client, want %d", when, n, want)
			}
		}
	}
	refused := func(r response, when string) {
		t.Helper()
		if r.status != http.StatusTooManyRequests {
			t.Fatalf("%s: %d %s, want 429", when, r.status, strings.TrimSpace(r.body))
		}
		if p := r.problem(t); len(p.Violated) != 1 || p.Violated[0] != "export" {
			t.Fatalf("%s: refused by %v, want [export]", when, p.Violated)
		}
	}
	// admittedAgain polls (the pre-limiter remembers a refusal by Redis for up to a
	// second) until an export of the client is admitted.
	admittedAgain := func(when string) {
		t.Helper()
		var r response
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if r = export(0); r.status == http.StatusOK {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: exports still refused after 5s: %d %s", when, r.status, strings.TrimSpace(r.body))
			}
		}
	}
	// long starts n exports of ms in the background; their answers arrive on the
	// channel (status, or -1 and the error).
	type answer struct {
		status int
		body   string
		err    error
	}
	long := func(n, ms int) <-chan answer {
		out := make(chan answer, n)
		for range n {
			go func() {
				resp, err := c.Get(fmt.Sprintf("%s/api/export?ms=%d", srv.url, ms))
				if err != nil {
					out <- answer{status: -1, err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				out <- answer{status: resp.StatusCode, body: string(b), err: err}
			}()
		}
		return out
	}
	finished := func(answers <-chan answer, n, ms int, when string) {
		t.Helper()
		for range n {
			a := <-answers
			if a.err != nil || a.status != http.StatusOK || a.body != fmt.Sprintf("exported in %d ms\n", ms) {
				t.Fatalf("%s: %d %q %v, want 200", when, a.status, a.body, a.err)
			}
		}
	}

	if n := leases(); n != 0 {
		t.Fatalf("Redis holds %d leases of the client before the test", n)
	}
	if !metricShows(`ratelimit_fallback_active{policy="export"} 0`) {
		t.Fatal("policy export is in its failure mode before the outage")
	}

	// Redis dies. The client's quick exports (each ends before the next) are decided
	// by the local mode while the breaker confirms the outage, then in the failure
	// mode. The client had no shared answer, so the local mode starts it empty.
	if err := redis.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	quick := 0
	for deadline := time.Now().Add(10 * time.Second); !metricShows(`ratelimit_fallback_active{policy="export"} 1`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("policy export not in its failure mode within 10s of the kill:\n%s", grepLines(srv.logs.String(), "level=WARN"))
		}
		if r := export(0); r.status != http.StatusOK {
			t.Fatalf("quick export %d with Redis dead: %d %s, want 200 (one in flight at a time)", quick, r.status, strings.TrimSpace(r.body))
		}
		quick++
	}
	localAfter := time.Since(killed)

	// Two long exports in the local mode, and the third refused.
	started := time.Now() // both start their work after this, and end at least handOverExportMillis later
	running := long(2, handOverExportMillis)
	waitStarted(t, srv)
	waitStarted(t, srv)
	refused(export(0), "third export in the local mode")

	// Redis is back (empty), and the server returns to shared enforcement.
	restarted := time.Now()
	if err := redis.Restart(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !metricShows(`ratelimit_fallback_active{policy="export"} 0`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("policy export still in its failure mode 10s after the restart:\n%s", grepLines(srv.logs.String(), "level=WARN"))
		}
	}
	sharedAfter := time.Since(restarted)

	// While the two run, the client's exports are refused: Redis counts them. An
	// answer that arrives before the exports could have ended (a margin before
	// handOverExportMillis from their start) was decided while both were in flight.
	conclusive := time.Duration(handOverExportMillis)*time.Millisecond - 300*time.Millisecond
	checks := 0
	var heldOnRedis int64 = -1
	for time.Since(started) < conclusive-200*time.Millisecond {
		r := export(0)
		if time.Since(started) >= conclusive {
			break // decided too late to be sure both were still in flight
		}
		if r.status == http.StatusOK {
			t.Fatalf("export %d with both outage exports in flight, after the return to Redis: admitted (200): over-grant, 3 in flight against a limit of %d; Redis holds %d leases of the client",
				checks, exportMaxInFlight, leases())
		}
		refused(r, fmt.Sprintf("export %d with both outage exports in flight, after the return to Redis", checks))
		checks++
		if heldOnRedis < 0 {
			if heldOnRedis = leases(); time.Since(started) >= conclusive {
				heldOnRedis = -1 // read too late to be sure both were still in flight
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if checks == 0 {
		t.Fatalf("inconclusive: shared enforcement returned %v after the restart, %v after the long exports started: no export could be decided while both surely ran",
			sharedAfter, time.Since(started))
	}
	if heldOnRedis >= 0 && heldOnRedis != exportMaxInFlight {
		t.Errorf("after the return, with both outage exports in flight: Redis holds %d leases of the client, want %d (handed over)", heldOnRedis, exportMaxInFlight)
	}
	t.Logf("local mode %v after the kill (%d quick exports); shared enforcement %v after the restart; %d exports refused while both ran; Redis held %d leases of the client (-1: not read in time)",
		localAfter.Round(time.Millisecond), quick, sharedAfter.Round(time.Millisecond), checks, heldOnRedis)

	// The two end: their releases go to Redis, and both slots are free again.
	finished(running, 2, handOverExportMillis, "an export admitted during the outage")
	waitLeases(0, 3*time.Second, "after the outage exports ended")
	admittedAgain("after the outage exports ended")
	again := long(2, 1000)
	waitStarted(t, srv)
	waitStarted(t, srv)
	refused(export(0), "third export in flight after the outage")
	if n := leases(); n != exportMaxInFlight {
		t.Errorf("two exports in flight after the outage: Redis holds %d leases of the client, want %d", n, exportMaxInFlight)
	}
	finished(again, 2, 1000, "an export after the outage")
	waitLeases(0, 3*time.Second, "after the exports after the outage ended")
	admittedAgain("after the exports after the outage ended")

	if errs := grepLines(srv.logs.String(), "level=ERROR"); errs != "" {
		t.Errorf("the server logged errors:\n%s", errs)
	}
	t.Logf("took %v; the server's warnings:\n%s", time.Since(begin).Round(time.Millisecond), grepLines(srv.logs.String(), "level=WARN"))
}
