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
		if err := CheckAddress(addr); err != nil {
			return nil, fmt.Errorf("redisstore: Dial: bad address %q (want host:port): %w", addr, err)
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
