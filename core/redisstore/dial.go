package redisstore

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Dial connects to Redis at addrs (host:port): one address is a standalone server,
// several are seeds of a Redis Cluster. Dial does not wait for the server: the first
// decision does, and Ping checks it. Close closes the client. For passwords, TLS or
// Sentinel, use DialUniversal.
//
// The client it makes bounds every decision: it honours ctx deadlines, dials once
// with a 100ms timeout, reads and writes within 200ms, waits at most 200ms for a
// pooled connection, and retries a command once, 5ms later (a pooled connection to a
// server that restarted). A decision against a dead server ends within about 250ms,
// against a stuck one within about 400ms (a read that times out is retried once),
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
	return dial("Dial", &redis.UniversalOptions{Addrs: addrs}, options)
}

// DialUniversal is Dial for any deployment go-redis's UniversalOptions describe: a
// password or TLS, a Sentinel (MasterName, with the Sentinels' addresses in Addrs),
// a Cluster (several Addrs, or IsClusterMode). It makes the client
// redis.NewUniversalClient makes, with Dial's bounds for every timeout, retry count
// and backoff that o leaves zero, and ContextTimeoutEnabled set; o is not modified.
// Close closes the client.
//
// Those bounds matter most under core/resilient: go-redis's defaults spend 1.65s of
// dial retries on a dead server, so resilient's breaker waits out its confirming
// probe (1s) before it opens, and until then Local mode admits no more than each
// key's last shared answer. With the bounds, a Sentinel failover goes to Local mode
// within tens of milliseconds of the master's death rather than about a second
// later, and admits at the policy's rate throughout (docs/failure.md).
func DialUniversal(o *redis.UniversalOptions, options ...Option) (*Store, error) {
	if o == nil || len(o.Addrs) == 0 {
		return nil, fmt.Errorf("redisstore: DialUniversal: no address")
	}
	return dial("DialUniversal", o, options)
}

// dial checks o's addresses, then makes the bounded client and its store, named
// caller in errors.
func dial(caller string, o *redis.UniversalOptions, options []Option) (*Store, error) {
	for _, addr := range o.Addrs {
		if err := CheckAddress(addr); err != nil {
			return nil, fmt.Errorf("redisstore: %s: bad address %q (want host:port): %w", caller, addr, err)
		}
	}
	client := redis.NewUniversalClient(bounded(o))
	s, err := New(client, options...)
	if err != nil {
		client.Close()
		return nil, err
	}
	s.closers = append(s.closers, client.Close)
	return s, nil
}

// CheckAddress reports why addr can never be dialled, the check Dial makes of each
// address: it is not host:port, or its port is neither a number from 1 to 65535
// nor a service name. Whether the host answers is for the first decision to find
// out. Use it to reject a configuration where it is read.
func CheckAddress(addr string) error {
	if strings.ContainsAny(addr, " ,") {
		return errors.New("spaces or commas")
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := net.LookupPort("tcp", port); err != nil || n == 0 {
		return fmt.Errorf("port %q is not a port", port)
	}
	return nil
}
