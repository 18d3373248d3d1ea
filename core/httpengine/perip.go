package httpengine

import (
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// PerIPPolicy is the name of the policy PerIP enforces, as the rate-limit fields
// and metrics show it.
const PerIPPolicy = "per-ip"

// PerIP is the simplest Limiter: rate per client address, with a token bucket
// whose burst is the rate's limit, on an in-memory store of its own. The client
// address is the TCP peer (IPv6 grouped by /64); behind proxies, use New with a
// keyfuncs.ClientIP that trusts them. The store runs no background goroutine (it
// evicts recovered keys when it is full, and holds at most
// memory.DefaultMaxKeys), so a Limiter that is no longer used leaves nothing
// running and is garbage collected. The adapters offer it as one line:
//
//	r.Use(chimw.PerIP(core.PerSecond(10)))
func PerIP(rate core.Rate, options ...Option) (*Limiter, error) {
	policy, err := core.NewPolicy(PerIPPolicy, core.TokenBucket, rate)
	if err != nil {
		return nil, fmt.Errorf("httplimit: PerIP: %w", err)
	}
	store, err := memory.New(memory.WithSweepInterval(0))
	if err != nil {
		return nil, fmt.Errorf("httplimit: PerIP: %w", err)
	}
	clientIP, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{})
	if err != nil {
		return nil, fmt.Errorf("httplimit: PerIP: %w", err)
	}
	return New(store, Limit(policy, clientIP.Key), options...)
}
