package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrEvicts is wrapped by the errors of CheckEviction that name a server which may
// delete the store's keys before they expire.
var ErrEvicts = errors.New("redisstore: Redis may evict rate-limit state")

// CheckEviction reports the Redis servers that may delete the store's keys before
// they expire: those with maxmemory set and a maxmemory-policy other than
// noeviction. Every key of the store has a TTL, so the volatile-* policies delete
// them too, and a client whose state is deleted starts again with its whole limit:
// a flood of invented keys (random addresses, made-up users) then buys a fresh
// budget for a locked account. Under noeviction a full server refuses the writes
// of admissions with OOM, decisions fail as core.ErrStoreUnavailable (the failure
// modes of core/resilient decide), and no state is lost; refusals write nothing and
// still refuse.
//
// It reads INFO memory of the server, of the master a Sentinel names, or of each
// Cluster master or Ring shard, and returns nil when none evicts, an error wrapping
// ErrEvicts naming each one that does, or another error when INFO cannot be read (a
// server down, a managed Redis that renamed INFO, or package embedded's miniredis,
// which never evicts and has no INFO memory). Call it once at start-up and log what
// it says: the store keeps working either way.
func (s *Store) CheckEviction(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	check := func(ctx context.Context, c *redis.Client) error {
		err := checkServerEviction(ctx, c)
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		return nil
	}
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		if err := c.ForEachMaster(ctx, check); err != nil {
			return fmt.Errorf("redisstore: check eviction: %w", err)
		}
	case *redis.Ring:
		if err := c.ForEachShard(ctx, check); err != nil {
			return fmt.Errorf("redisstore: check eviction: %w", err)
		}
	case *redis.Client:
		_ = check(ctx, c)
	default:
		return fmt.Errorf("redisstore: check eviction: a %T client", s.client)
	}
	return errors.Join(errs...)
}

// checkServerEviction is CheckEviction for one server.
func checkServerEviction(ctx context.Context, c *redis.Client) error {
	addr := c.Options().Addr
	if addr == failoverAddr {
		addr = "the master the Sentinels name"
	}
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return fmt.Errorf("redisstore: check eviction: INFO memory on %s: %w", addr, err)
	}
	maxmemory, policy, err := parseEviction(info)
	if err != nil {
		return fmt.Errorf("redisstore: check eviction: INFO memory on %s: %w", addr, err)
	}
	if maxmemory == 0 || policy == "noeviction" {
		return nil
	}
	return fmt.Errorf("%w: %s has maxmemory %d bytes with maxmemory-policy %s: when memory runs out it deletes keys, and those clients start again with their whole limit; set maxmemory-policy noeviction",
		ErrEvicts, addr, maxmemory, policy)
}

// failoverAddr is the Addr go-redis gives the options of a Sentinel failover client.
const failoverAddr = "FailoverClient"

// parseEviction reads maxmemory (bytes; 0 is no limit) and maxmemory_policy from
// the reply of INFO memory.
func parseEviction(info string) (maxmemory int64, policy string, err error) {
	var haveMax, havePolicy bool
	for line := range strings.Lines(info) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch name {
		case "maxmemory":
			if haveMax {
				return 0, "", errors.New("maxmemory twice")
			}
			maxmemory, err = strconv.ParseInt(value, 10, 64)
			if err != nil || maxmemory < 0 {
				return 0, "", fmt.Errorf("maxmemory %q is not a size", value)
			}
			haveMax = true
		case "maxmemory_policy":
			if havePolicy {
				return 0, "", errors.New("maxmemory_policy twice")
			}
			if value == "" {
				return 0, "", errors.New("empty maxmemory_policy")
			}
			policy, havePolicy = value, true
		}
	}
	if !haveMax || !havePolicy {
		return 0, "", errors.New("no maxmemory or maxmemory_policy field")
	}
	return maxmemory, policy, nil
}
