package redisstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Dial connects to Redis at addrs (host:port): one address is a standalone server,
// several are seeds of a Redis Cluster. The client it makes honours ctx deadlines;
// Close closes it. Dial does not wait for the server: the first decision does, and
// Ping checks it. For passwords, TLS or Sentinel, make a client and use New.
func Dial(addrs []string, options ...Option) (*Store, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("redisstore: Dial: no address")
	}
	for _, addr := range addrs {
		if addr == "" || strings.ContainsAny(addr, " ,") {
			return nil, fmt.Errorf("redisstore: Dial: bad address %q (want host:port)", addr)
		}
	}
	var client redis.UniversalClient
	if len(addrs) == 1 {
		client = redis.NewClient(&redis.Options{Addr: addrs[0], ContextTimeoutEnabled: true})
	} else {
		client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	}
	s, err := New(client, options...)
	if err != nil {
		client.Close()
		return nil, err
	}
	s.closers = append(s.closers, client.Close)
	return s, nil
}

// NewEmbedded runs an in-process Redis (miniredis) and returns a Store on it that runs
// the same scripts as on a real server. It is for tests, demos and trying the Redis
// path without a server; state lives only as long as the store. miniredis, made for
// tests, does not count TTLs down by itself, so the store does, once a second, by the
// time that passed on the store's clock (WithClock's, which it then also reads from
// that goroutine, or the real one): a key expires at most a tick late (which decides
// nothing differently: its state has recovered), never early, and memory stays
// bounded by the keys in use. Close stops the server and that goroutine.
func NewEmbedded(options ...Option) (*Store, error) {
	ticker := time.NewTicker(embeddedExpiryTick)
	s, err := newEmbedded(ticker.C, options...)
	if err != nil {
		ticker.Stop()
		return nil, err
	}
	s.closers = append(s.closers, func() error { ticker.Stop(); return nil })
	return s, nil
}

// newEmbedded is NewEmbedded counting TTLs down at every tick of ticks.
func newEmbedded(ticks <-chan time.Time, options ...Option) (*Store, error) {
	server := miniredis.NewMiniRedis()
	if err := server.Start(); err != nil {
		return nil, fmt.Errorf("redisstore: NewEmbedded: %w", err)
	}
	client := redis.NewClient(&redis.Options{Addr: server.Addr(), ContextTimeoutEnabled: true})
	s, err := New(client, options...)
	if err != nil {
		client.Close()
		server.Close()
		return nil, err
	}
	clock := time.Now
	if s.clock != nil {
		clock = s.clock // TTLs were computed on the caller's clock
	}
	stopExpiry := countDownTTLs(server, ticks, clock)
	s.closers = append(s.closers, client.Close, func() error {
		stopExpiry()
		server.Close()
		return nil
	})
	return s, nil
}

// embeddedExpiryTick is how often an embedded store counts its TTLs down.
const embeddedExpiryTick = time.Second

// countDownTTLs advances server's TTLs by the time that passed on now's clock, at
// every tick, until stop is called; stop returns once the goroutine has.
func countDownTTLs(server *miniredis.Miniredis, ticks <-chan time.Time, now func() time.Time) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	last := now()
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-ticks:
				// A clock that steps back is waited out, not counted: TTLs never run fast.
				if t := now(); t.After(last) {
					server.FastForward(t.Sub(last))
					last = t
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
