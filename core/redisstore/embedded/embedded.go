package embedded

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
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

// NewOnClock is New deciding at now's clock (redisstore.WithClock) and counting the
// server's TTLs down on it rather than on the real clock: before each command, by the
// time that passed on now since the one before. It is for replays on a virtual clock,
// such as the policy simulator's: counted on the real clock, a replay that ran longer
// than a key's TTL lost the key while it still restricted in replay time, and decided
// it afresh (TestEmbeddedTTLsFollowTheStoresClock).
func NewOnClock(now func() time.Time, options ...redisstore.Option) (*redisstore.Store, error) {
	if now == nil {
		return nil, fmt.Errorf("redisstore/embedded: NewOnClock: nil clock")
	}
	store, _, err := newStoreOnClock(now, options...)
	return store, err
}

// newStoreOnClock is NewOnClock, returning the server too, for tests.
func newStoreOnClock(now func() time.Time, options ...redisstore.Option) (*redisstore.Store, *miniredis.Miniredis, error) {
	return newStoreWith(func(server *miniredis.Miniredis, client *redis.Client) func() {
		client.AddHook(&clockHook{server: server, now: now, last: now()})
		return func() {}
	}, append(slices.Clip(options), redisstore.WithClock(now))...)
}

// newStore is New counting TTLs down at every tick of ticks, on clock now, with ticks
// at most tick apart. It returns the server too, for tests.
func newStore(ticks <-chan time.Time, now func() time.Time, tick time.Duration, options ...redisstore.Option) (*redisstore.Store, *miniredis.Miniredis, error) {
	return newStoreWith(func(server *miniredis.Miniredis, _ *redis.Client) func() {
		return countDownTTLs(server, ticks, now, tick)
	}, append(slices.Clip(options), redisstore.WithExpiryStep(tick))...)
}

// newStoreWith starts a server and returns a store on it, and the server too, for
// tests. countdown starts what counts the server's TTLs down, and returns what stops it.
func newStoreWith(countdown func(*miniredis.Miniredis, *redis.Client) (stop func()), options ...redisstore.Option) (*redisstore.Store, *miniredis.Miniredis, error) {
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
	stopCountdown = countdown(server, client)
	return store, server, nil
}

// clockHook is a go-redis hook that counts server's TTLs down, before each command,
// by the time that passed on now since the command before. A clock that steps back
// is waited out.
type clockHook struct {
	server *miniredis.Miniredis
	now    func() time.Time

	mu   sync.Mutex
	last time.Time
}

func (h *clockHook) advance() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.now(); t.After(h.last) {
		h.server.FastForward(t.Sub(h.last))
		h.last = t
	}
}

func (h *clockHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *clockHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.advance()
		return next(ctx, cmd)
	}
}

func (h *clockHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.advance()
		return next(ctx, cmds)
	}
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
