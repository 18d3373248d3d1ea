package redisstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Dial connects to Redis at addrs (host:port): one address is a standalone server,
// several are seeds of a Redis Cluster. Dial does not wait for the server: the first
// decision does, and Ping checks it. Close closes the client. For passwords, TLS or
// Sentinel, make a client and use New.
//
// The client it makes bounds every decision: it honours ctx deadlines, dials once
// with a 100ms timeout, reads and writes within 200ms, waits at most 200ms for a
// pooled connection, and retries a command once, 5ms later (a pooled connection to a
// server that restarted). A decision against a dead server ends within about 250ms,
// with an error wrapping core.ErrStoreUnavailable, instead of go-redis's 1.65s of
// dial retries.
//
// Without core/resilient, that error is the decision: the middleware answers it as
// a store failure (fail closed, 503), for every request, as long as Redis is down.
// In production, wrap the store in resilient.New, which keeps deciding in each
// policy's failure mode, continues each key from its last shared answer, and probes
// Redis in the background to come back; attach core/prommetrics to see it.
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
		client = redis.NewClient(dialOptions(addrs[0]))
	} else {
		client = redis.NewClusterClient(dialClusterOptions(addrs))
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
// real time that passed, as Redis does: memory stays bounded by the keys in use. A
// countdown in steps of a second takes a whole step off a key written just before it,
// so the store adds a second to its expiry margin (WithExpiryMargin, or the default),
// and never takes off more than a second at once (a stalled process keeps its keys
// longer): no key expires before its state has recovered. Close stops the server and the
// goroutine that counts.
func NewEmbedded(options ...Option) (*Store, error) {
	ticker := time.NewTicker(embeddedExpiryTick)
	s, err := newEmbedded(ticker.C, time.Now, embeddedExpiryTick, options...)
	if err != nil {
		ticker.Stop()
		return nil, err
	}
	s.closers = append(s.closers, func() error { ticker.Stop(); return nil })
	return s, nil
}

// newEmbedded is NewEmbedded counting TTLs down at every tick of ticks, on clock now,
// with ticks at most tick apart.
func newEmbedded(ticks <-chan time.Time, now func() time.Time, tick time.Duration, options ...Option) (*Store, error) {
	server := miniredis.NewMiniRedis()
	if err := server.Start(); err != nil {
		return nil, fmt.Errorf("redisstore: NewEmbedded: %w", err)
	}
	client := redis.NewClient(&redis.Options{Addr: server.Addr(), ContextTimeoutEnabled: true})
	slack := func(c *config) error { c.slack = tick; return nil }
	s, err := New(client, append(options[:len(options):len(options)], slack)...)
	if err != nil {
		client.Close()
		server.Close()
		return nil, err
	}
	stopExpiry := countDownTTLs(server, ticks, now, tick)
	s.closers = append(s.closers, client.Close, func() error {
		stopExpiry()
		server.Close()
		return nil
	})
	return s, nil
}

// embeddedExpiryTick is how often an embedded store counts its TTLs down.
const embeddedExpiryTick = time.Second

// countDownTTLs takes the time that passed on now's clock off server's TTLs at every
// tick, but never more than most, until stop is called; stop returns once the
// goroutine has. After a stall (a late tick) the keys written just before it have not
// lived the whole stall: counting it would expire them early, while not counting it
// only keeps every key a little longer. A clock that steps back is waited out.
func countDownTTLs(server *miniredis.Miniredis, ticks <-chan time.Time, now func() time.Time, most time.Duration) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	last := now()
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-ticks:
				if t := now(); t.After(last) {
					server.FastForward(min(t.Sub(last), most))
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
