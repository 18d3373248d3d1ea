package redisstore

import (
	"fmt"
	"strings"

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
// path without a server; state lives only as long as the store. Close stops the server.
func NewEmbedded(options ...Option) (*Store, error) {
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
	s.closers = append(s.closers, client.Close, func() error { server.Close(); return nil })
	return s, nil
}
