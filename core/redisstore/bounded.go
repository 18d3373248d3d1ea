package redisstore

import "github.com/redis/go-redis/v9"

// BoundedByContext reports whether a decision ends once its context is done: true when
// the store's go-redis client has ContextTimeoutEnabled (Dial and embedded.New set it),
// so that a ctx deadline bounds the network reads and writes. Without it a call waits
// for the client's own timeouts. resilient.New reads it to
// decide on the caller's goroutine instead of guarding each call with its own.
func (s *Store) BoundedByContext() bool {
	switch c := s.client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}
