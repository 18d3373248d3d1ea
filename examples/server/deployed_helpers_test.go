package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// Helpers of the deployed-path tests: the server built from its flags, on a real
// redis-server or a real 3-master Cluster, driven over loopback TCP.

// followWallClock moves the server's virtual clock with the real time until the
// test ends. The Redis store of -store redis reads Redis TIME (the server offers
// no clock for it), so when Redis and the failure mode's local store must agree on
// time (breaker cooldowns, the pre-limiter, local refills), the virtual clock
// follows the wall. Bounds are then computed from measured elapsed time.
func followWallClock(t *testing.T, clock *storetest.Clock) {
	t.Helper()
	start, origin := time.Now(), clock.Millis()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				clock.Set(origin + time.Since(start).Milliseconds())
			}
		}
	}()
	t.Cleanup(func() { close(done); wg.Wait() })
}

// apiStateKey is the Redis key of policy "api"'s state for the client key (as
// keyfuncs.ClientIP writes it, "ip:127.0.0.9").
func apiStateKey(srv *testServer, clientKey string) string {
	return stateKey(srv.app.api, clientKey)
}

// stateKey is the Redis key of policy p's state for key.
func stateKey(p core.Policy, key string) string {
	return redisstore.DefaultPrefix + "{" + p.ID() + ":" + key + "}"
}

// masterIndex is the index in c.Servers of the master that serves key's slot,
// found with CLUSTER KEYSLOT and CLUSTER SHARDS.
func masterIndex(t *testing.T, c *redistest.Cluster, key string) int {
	t.Helper()
	ctx := context.Background()
	client := c.Servers[0].NewClient()
	defer client.Close()
	slot, err := client.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatalf("CLUSTER KEYSLOT %q: %v", key, err)
	}
	shards, err := client.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatalf("CLUSTER SHARDS: %v", err)
	}
	for _, shard := range shards {
		for _, r := range shard.Slots {
			if r.Start > slot || slot > r.End {
				continue
			}
			for _, node := range shard.Nodes {
				if node.Role != "master" {
					continue
				}
				for i, s := range c.Servers {
					if s.Addr == net.JoinHostPort(node.IP, strconv.FormatInt(node.Port, 10)) {
						return i
					}
				}
			}
		}
	}
	t.Fatalf("no master serves slot %d of %q", slot, key)
	return -1
}

// failOver kills master i of c (SIGKILL) and waits for its replica's promotion; it
// returns when each happened.
func failOver(t *testing.T, c *redistest.Cluster, i int) (killed, promoted time.Time) {
	t.Helper()
	killed = time.Now()
	if err := c.Servers[i].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitPromoted(i); err != nil {
		t.Fatal(err)
	}
	return killed, time.Now()
}

// flushCluster empties every master, so that subtests sharing a Cluster start clean.
func flushCluster(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	for _, s := range c.Servers {
		client := s.NewClient()
		err := client.FlushAll(context.Background()).Err()
		client.Close()
		if err != nil {
			t.Fatalf("FLUSHALL %s: %v", s.Addr, err)
		}
	}
}

// clusterKeys lists the keys of every master that contain substr.
func clusterKeys(t *testing.T, c *redistest.Cluster, substr string) []string {
	t.Helper()
	var keys []string
	for _, s := range c.Servers {
		client := s.NewClient()
		found, err := client.Keys(context.Background(), "*").Result()
		client.Close()
		if err != nil {
			t.Fatalf("KEYS on %s: %v", s.Addr, err)
		}
		for _, k := range found {
			if strings.Contains(k, substr) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// tokenBound is what a token bucket of burst and rate per second may admit over
// elapsed, with the tests' tolerance of 10%.
func tokenBound(burst, perSecond int64, elapsed time.Duration) int64 {
	exact := float64(burst) + float64(perSecond)*elapsed.Seconds()
	return int64(exact*1.1) + 1
}

// phaseCounts counts admitted and refused answers per phase of a load test; the
// phase is read when each answer arrives.
type phaseCounts struct {
	phase    atomic.Int32
	admitted [3]atomic.Int64
	refused  [3]atomic.Int64
	other    [3]atomic.Int64
}

func (p *phaseCounts) record(status int) {
	ph := p.phase.Load()
	switch status {
	case http.StatusOK:
		p.admitted[ph].Add(1)
	case http.StatusTooManyRequests:
		p.refused[ph].Add(1)
	default:
		p.other[ph].Add(1)
	}
}

func (p *phaseCounts) String() string {
	var b strings.Builder
	for i := range p.admitted {
		fmt.Fprintf(&b, " [phase %d: %d admitted, %d refused, %d other]", i, p.admitted[i].Load(), p.refused[i].Load(), p.other[i].Load())
	}
	return b.String()
}

// hammer sends GET /api/resource from the client address ip on goroutines
// goroutines until stop is closed, counting the answers in counts.
func hammer(t *testing.T, srv *testServer, ip string, goroutines int, counts *phaseCounts, stop <-chan struct{}, wg *sync.WaitGroup) {
	c := client(t, ip)
	repeat(goroutines, 0, stop, wg, func() {
		req, _ := http.NewRequest(http.MethodGet, srv.url+"/api/resource", nil)
		status, err := statusOf(c, req)
		if err != nil {
			status = -1
		}
		counts.record(status)
	})
}

// repeat calls send on each of goroutines goroutines, every interval apart (back to
// back when 0), until stop is closed.
func repeat(goroutines int, every time.Duration, stop <-chan struct{}, wg *sync.WaitGroup, send func()) {
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tick <-chan time.Time
			if every > 0 {
				ticker := time.NewTicker(every)
				defer ticker.Stop()
				tick = ticker.C
			}
			for {
				if tick == nil {
					select {
					case <-stop:
						return
					default:
					}
				} else {
					select {
					case <-stop:
						return
					case <-tick:
					}
				}
				send()
			}
		}()
	}
}

// statusOf sends req with c and returns the answer's status, for the goroutines of
// a test, which must not stop it. It reads the body to the end, so the connection
// is reused: closed unread, each request left a socket in TIME_WAIT, 20,000 in one
// run, until dials to Redis failed for want of local ports.
func statusOf(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// remainingOf reads policy's remaining from a RateLimit field
// (`"api";r=4;t=60, "attempts";r=1;t=60`), or -1 when it is absent.
func remainingOf(field, policy string) int64 {
	for _, member := range strings.Split(field, ",") {
		member = strings.TrimSpace(member)
		if !strings.HasPrefix(member, strconv.Quote(policy)+";") {
			continue
		}
		for _, param := range strings.Split(member, ";")[1:] {
			if v, ok := strings.CutPrefix(param, "r="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return -1
				}
				return n
			}
		}
	}
	return -1
}

// decidedByRedisAgain sends requests of the client address ip, 50 ms apart, recording
// their answers in counts, until one of them changes key's state on redis, or until
// deadline: it reports whether the key is decided by Redis again. The key must be
// quiet otherwise.
func decidedByRedisAgain(t *testing.T, srv *testServer, redis *goredis.Client, key, ip string, counts *phaseCounts, deadline time.Time) bool {
	t.Helper()
	c := client(t, ip)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		before, _ := redis.Dump(context.Background(), key).Result()
		counts.record(do(t, c, "GET", srv.url+"/api/resource", nil).status)
		after, _ := redis.Dump(context.Background(), key).Result()
		if after != "" && after != before {
			return true
		}
	}
	return false
}
