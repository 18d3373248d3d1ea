package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestRedisKilledAndRestartedEmpty: three goroutines hammer one client address
// while the standalone redis-server behind the server (-on-store-error local) is
// killed (SIGKILL) and, a second later, restarted on the same port with no data
// (phase 2 begins when the restart does).
// Per phase, the admitted requests stay within the token bucket's bound (burst 20,
// 10 a second, +10%):
//
//   - phase 0, Redis up: burst + rate × its length;
//   - phases 0 and 1, Redis up then dead: the local mode continues from the last
//     shared answer and never refills (DESIGN.md), so one bucket's bound over both;
//   - phase 2, Redis restarted empty: its state is lost, so a full bucket again:
//     burst + rate × its length; and the key's state reappears in Redis (shared
//     enforcement is back) within 5 s.
//
// Redis decides on its own TIME, so the server's virtual clock follows the wall
// and the bounds use measured time.
func TestRedisKilledAndRestartedEmpty(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			redis := redistest.StartServer(t)
			srv := startServer(t, router, append([]string{"-store", "redis", "-redis-addrs", redis.Addr}, loadPolicyArgs...)...)
			followWallClock(t, srv.clock)
			const ip = "127.0.0.7"
			key := apiStateKey(srv, "ip:"+ip)

			counts := &phaseCounts{}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			start := time.Now()
			hammer(t, srv, ip, 3, counts, stop, &wg)
			time.Sleep(700 * time.Millisecond)
			counts.phase.Store(1)
			killed := time.Now()
			if err := redis.Kill(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			// Phase 2 starts as the restart does: the new server may answer before
			// Restart returns.
			restarted := time.Now()
			counts.phase.Store(2)
			if err := redis.Restart(); err != nil {
				close(stop)
				wg.Wait()
				t.Fatal(err)
			}

			client := redis.NewClient()
			defer client.Close()
			recovered := false
			for deadline := time.Now().Add(5 * time.Second); !recovered && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				n, err := client.Exists(context.Background(), key).Result()
				recovered = err == nil && n == 1
			}
			recoveredAfter := time.Since(restarted)
			time.Sleep(500 * time.Millisecond)
			close(stop)
			wg.Wait()
			end := time.Now()

			up, down, back := killed.Sub(start), restarted.Sub(killed), end.Sub(restarted)
			a0, a1, a2 := counts.admitted[0].Load(), counts.admitted[1].Load(), counts.admitted[2].Load()
			t.Logf("%s: phase 0 (up %v): %d admitted, bound %d; phase 1 (killed %v): %d admitted, bound over phases 0+1 %d; phase 2 (restarted empty %v): %d admitted, bound %d; state back in Redis %v after the restart (%v);%s",
				router, up.Round(time.Millisecond), a0, tokenBound(loadBurst, loadPerSecond, up),
				down.Round(time.Millisecond), a1, tokenBound(loadBurst, loadPerSecond, up+down),
				back.Round(time.Millisecond), a2, tokenBound(loadBurst, loadPerSecond, back), recoveredAfter.Round(time.Millisecond), recovered, counts)
			for p := range counts.other {
				if n := counts.other[p].Load(); n != 0 {
					t.Errorf("phase %d: %d answers neither 200 nor 429", p, n)
				}
			}
			if bound := tokenBound(loadBurst, loadPerSecond, up); a0 > bound {
				t.Errorf("phase 0 (Redis up): %d admitted over %v, bound %d", a0, up, bound)
			}
			if a1 == 0 {
				t.Errorf("phase 1 (Redis dead): nothing admitted, want the local mode's decisions")
			}
			if bound := tokenBound(loadBurst, loadPerSecond, up+down); a0+a1 > bound {
				t.Errorf("phases 0+1 (Redis up, then dead): %d admitted (%d shared, %d local) over %v, bound %d: the local mode refilled the bucket",
					a0+a1, a0, a1, up+down, bound)
			}
			if bound := tokenBound(loadBurst, loadPerSecond, back); a2 > bound {
				t.Errorf("phase 2 (Redis restarted empty): %d admitted over %v, bound %d", a2, back, bound)
			}
			if !recovered {
				t.Errorf("the key's state did not reappear in the restarted Redis within 5 s")
			}
		})
	}
}
