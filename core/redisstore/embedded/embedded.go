package embedded

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// expiryTick is how often an embedded store counts its TTLs down.
const expiryTick = time.Second

// New starts an in-process Redis and returns a redisstore.Store on it, configured by
// options as redisstore.New is. The store owns the server: Close stops it and the
// goroutine that counts its TTLs down.
func New(options ...redisstore.Option) (*redisstore.Store, error) {
	ticker := time.NewTicker(expiryTick)
	stopTicker := redisstore.WithCloser(func() error { ticker.Stop(); return nil })
	store, _, err := newStore(ticker.C, time.Now, expiryTick, append(slices.Clip(options), stopTicker)...)
	if err != nil {
		ticker.Stop()
		return nil, err
	}
	return store, nil
}

// newStore is New counting TTLs down at every tick of ticks, on clock now, with ticks
// at most tick apart. It returns the server too, for tests.
func newStore(ticks <-chan time.Time, now func() time.Time, tick time.Duration, options ...redisstore.Option) (*redisstore.Store, *miniredis.Miniredis, error) {
	password, err := newPassword()
	if err != nil {
		return nil, nil, fmt.Errorf("redisstore/embedded: New: %w", err)
	}
	server := miniredis.NewMiniRedis()
	// miniredis serves on a loopback port, where any local process could flush the
	// limits, lock out a key with a malformed state, or list usernames and addresses.
	server.RequireAuth(password)
	if err := server.Start(); err != nil {
		return nil, nil, fmt.Errorf("redisstore/embedded: New: %w", err)
	}
	client := redis.NewClient(&redis.Options{Addr: server.Addr(), Password: password, ContextTimeoutEnabled: true})
	var stopCountdown func()
	owned := []redisstore.Option{
		redisstore.WithExpiryStep(tick),
		redisstore.WithCloser(client.Close),
		redisstore.WithCloser(func() error {
			stopCountdown()
			server.Close()
			return nil
		}),
	}
	store, err := redisstore.New(client, append(slices.Clip(options), owned...)...)
	if err != nil {
		client.Close()
		server.Close()
		return nil, nil, err
	}
	stopCountdown = countDownTTLs(server, ticks, now, tick)
	return store, server, nil
}

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

// newPassword is a random password for one embedded server, known only to its store.
func newPassword() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
