package redisstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// processor is the part of a go-redis client the store uses: Client, ClusterClient,
// Ring and the failover clients all provide it, and their hooks see every command.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// topology is how a client spreads keys over servers, which decides which keys one
// script call may touch.
type topology int

const (
	standalone topology = iota // one server (Client, failover Client): any keys
	cluster                    // Redis Cluster: keys of one slot
	ring                       // Ring: keys of one hash tag
)

// Store is the Redis core.Store: each decision is one atomic Lua script. Create it
// with New, Dial or DialUniversal (or embedded.New, in process); it is safe for
// concurrent use.
type Store struct {
	client     processor
	topology   topology
	cluster    *redis.ClusterClient // the client on a Cluster: its batch queues, the slot reloads of failed
	server     string               // the one server of a standalone or failover client, for Node
	reloadedAt atomic.Int64         // UnixNano of the last reload failed asked for
	prefix     string
	clock      func() time.Time // nil: Redis TIME
	hashTag    HashTagFunc
	margin     any // the TTL margin in milliseconds, boxed once
	split      bool
	scripts    scripts
	specs      specCache
	batch      *batcher // nil unless WithBatching

	closed    atomic.Bool
	closeOnce sync.Once
	closers   []func() error // resources the store owns (WithCloser, Dial)
	closeErr  error
}

var (
	_ core.Store    = (*Store)(nil)
	_ core.Refunder = (*Store)(nil)
)

// New returns a Store deciding on client: a *redis.Client (standalone or failover), a
// *redis.ClusterClient or a *redis.Ring. Close does not close client. Enable the
// client's ContextTimeoutEnabled so that ctx deadlines bound each decision.
func New(client redis.UniversalClient, options ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("redisstore: New: nil client")
	}
	cfg, err := newConfig(options)
	if err != nil {
		return nil, err
	}
	s := &Store{
		client:  client,
		prefix:  cfg.prefix,
		clock:   cfg.clock,
		hashTag: cfg.hashTag,
		margin:  cfg.margin.Milliseconds(),
		split:   cfg.splitStacks,
		scripts: loadScripts(cfg.margin.Milliseconds()),
		closers: cfg.closers,
	}
	switch c := client.(type) {
	case *redis.ClusterClient:
		s.topology, s.cluster = cluster, c
	case *redis.Ring:
		s.topology = ring
	case *redis.Client:
		s.server = c.Options().Addr // a failover client's is go-redis's "FailoverClient"
	}
	if cfg.batchMax > 0 {
		s.batch = newBatcher(s, client, cfg.batchWindow, cfg.batchMax)
	}
	return s, nil
}

// now is the instant argument of a decision: the caller's clock in milliseconds, or
// serverTime for Redis TIME.
func (s *Store) now() (int64, error) {
	if s.clock == nil {
		return serverTime, nil
	}
	ms := s.clock().UnixMilli()
	if ms < 0 || ms >= 1<<50 {
		return 0, fmt.Errorf("redisstore: clock reads %d ms since the Unix epoch, outside 0..2^50", ms)
	}
	return ms, nil
}

// Decide applies one request in one script call. With WithBatching, concurrent
// decisions bound for one node share a round trip (see the package documentation).
func (s *Store) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if s.closed.Load() {
		return core.Result{}, ErrClosed
	}
	if err := req.Check(); err != nil {
		return core.Result{}, err
	}
	now, err := s.now()
	if err != nil {
		return core.Result{}, err
	}
	key := s.stateKey(&req.Policy, req.Key)
	if s.batch != nil {
		return s.batch.decide(ctx, req, key, now)
	}
	return s.decideAlone(ctx, req, key, now)
}

// decideAlone applies one request in its own call (aloneCommand).
func (s *Store) decideAlone(ctx context.Context, req core.Request, key string, now int64) (core.Result, error) {
	reqs := [1]core.Request{req}
	var results [1]core.Result
	script, args, single := s.aloneCommand(req, key, now)
	if !single {
		_, _, err := s.runStack(ctx, script, args, reqs[:], results[:])
		return results[0], err
	}
	reply, err := evalScript(ctx, s.client, script, args, redis.NewStringCmd)
	if err != nil {
		return core.Result{}, s.failed(ctx, reqs[:], err)
	}
	if err := parseSingle(reply.Val(), &reqs[0], &results[0]); err != nil {
		return core.Result{}, unexpectedReply(reqs[:], err)
	}
	script.loaded.Store(true)
	return results[0], nil
}

// aloneCommand is the script and arguments that charge req alone, and whether the
// script is a single-decision one: its policy's single-decision script, sent as EVAL
// until a call of it has succeeded (which loads it in the same round trip), or the
// stack script once the store holds maxCachedPolicies single-decision scripts.
func (s *Store) aloneCommand(req core.Request, key string, now int64) (*script, []any, bool) {
	single := s.scripts.singles.get(&req.Policy)
	if single == nil {
		reqs := []core.Request{req}
		stack := s.scripts.stackFor(reqs)
		return stack, s.stackArgs(stack.sha, modeCharge, now, reqs, []string{key}), false
	}
	args := singleArgs(single.sha, now, &req, key)
	if !single.loaded.Load() {
		args[0], args[1] = "eval", single.source
	}
	return single, args, true
}

// DecideStack applies the requests as one all-or-nothing decision. When their keys
// share a slot (always on a standalone server) it is one script call. Otherwise it
// charges the groups of keys that do, in order, and refunds the charged groups when a
// later one refuses (see docs/redis.md for the window this leaves).
func (s *Store) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	if err := core.CheckStack(reqs, results); err != nil {
		return false, err
	}
	now, err := s.now()
	if err != nil {
		return false, err
	}
	keys := make([]string, len(reqs))
	for i := range reqs {
		keys[i] = s.stateKey(&reqs[i].Policy, reqs[i].Key)
	}
	if groups := s.groups(keys); groups != nil {
		return s.decideAcrossSlots(ctx, now, reqs, keys, results, groups)
	}
	_, allowed, err := s.decide(ctx, modeCharge, now, reqs, keys, results)
	return allowed, err
}

// decide runs the stack script once over keys (which must share a slot).
func (s *Store) decide(ctx context.Context, mode string, now int64, reqs []core.Request, keys []string, results []core.Result) (int64, bool, error) {
	script := s.scripts.stackFor(reqs)
	return s.runStack(ctx, script, s.stackArgs(script.sha, mode, now, reqs, keys), reqs, results)
}

// runStack sends one call of a stack script and reads its reply (parseDecision).
func (s *Store) runStack(ctx context.Context, script *script, args []any, reqs []core.Request, results []core.Result) (int64, bool, error) {
	reply, err := evalScript(ctx, s.client, script, args, redis.NewIntSliceCmd)
	if err != nil {
		return 0, false, s.failed(ctx, reqs, err)
	}
	at, allowed, err := parseDecision(reply.Val(), reqs, results)
	if err != nil {
		return 0, false, unexpectedReply(reqs, err)
	}
	return at, allowed, nil
}

// Refund gives back req's effective cost to req's key, charged at chargedAt
// (core.Refunder), exactly as the Go transitions do (core/internal/transition):
// to a bucket or a queue what it has not refilled since chargedAt, never above a
// bucket's capacity, never a queue's TAT before now, and to a window only when it
// is the one that counted the charge and still counts. Concurrency leases end with
// Release instead.
func (s *Store) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := req.Check(); err != nil {
		return err
	}
	now, err := s.now()
	if err != nil {
		return err
	}
	reqs := [1]core.Request{req}
	keys := [1]string{s.stateKey(&req.Policy, req.Key)}
	var results [1]core.Result
	script := s.scripts.stackFor(reqs[:])
	args := s.stackArgs(script.sha, modeRefund, now, reqs[:], keys[:])
	args[len(args)-1] = chargedArg(chargedAt) // in refund mode, the lease argument says when the charge was taken
	_, _, err = s.runStack(ctx, script, args, reqs[:], results[:])
	return err
}

// chargedArg is the refund script's instant of a charge: ms since the epoch, or -1
// (no window's) for a zero or pre-epoch time.
func chargedArg(at time.Time) int64 {
	return max(at.UnixMilli(), -1)
}

// Release ends a concurrency lease. Releasing a lease that expired or was released
// already is not an error.
func (s *Store) Release(ctx context.Context, req core.Request, lease uint64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := req.Check(); err != nil {
		return err
	}
	if req.Policy.Algorithm() != core.Concurrency {
		return fmt.Errorf("redisstore: release: policy %q is %s, not concurrency", req.Policy.Name(), req.Policy.Algorithm())
	}
	req.Lease = lease
	reqs := []core.Request{req}
	script := s.scripts.stack[core.Concurrency]
	args := s.stackArgs(script.sha, modeRelease, 0, reqs, []string{s.stateKey(&req.Policy, req.Key)})
	reply, err := evalScript(ctx, s.client, script, args, redis.NewIntSliceCmd)
	if err != nil {
		return s.failed(ctx, reqs, err)
	}
	if v := reply.Val(); len(v) != 1 || v[0] != 0 && v[0] != 1 {
		return fmt.Errorf("policy %q: %w: release returned %v", req.Policy.Name(), ErrUnexpectedReply, v)
	}
	return nil
}

// Ping checks that Redis answers, for health checks.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := s.client.Process(ctx, redis.NewStatusCmd(ctx, "ping")); err != nil {
		return fmt.Errorf("redisstore: ping: %w", err)
	}
	return nil
}

// Key is the Redis key that holds policy's state for key:
// <prefix>{<policy ID>:<key>}, or <prefix>{<tag>}<policy ID>:<key> with WithHashTag,
// the key's '{', '}' and '%' percent-encoded (docs/redis.md). Operators use it to
// inspect a client's state.
func (s *Store) Key(policy core.Policy, key string) string { return s.stateKey(&policy, key) }

// nodeLookupTimeout bounds Node when the Cluster client has no slot map yet and
// must load one.
const nodeLookupTimeout = 100 * time.Millisecond

// Node names the master serving key, a Redis key (see Key): on a Cluster, its address
// from the client's slot map ("" when the map is not known); on a standalone or
// Sentinel deployment, the one master, whatever the key; "" on a Ring.
// core/resilient groups the failures of a stuck master with it.
func (s *Store) Node(key string) string {
	if s.cluster == nil {
		return s.server
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeLookupTimeout)
	defer cancel()
	master, err := s.cluster.MasterForKey(ctx, key)
	if err != nil {
		return ""
	}
	return master.Options().Addr
}

// Close marks the store closed and releases what it owns: the batching goroutines
// (after their round trips in flight), then what WithCloser handed it, then the
// client made by Dial. A client handed to New stays open unless it was handed to
// WithCloser too. Close is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.batch != nil {
			s.batch.close()
		}
		for _, closeFn := range s.closers {
			if err := closeFn(); err != nil && s.closeErr == nil {
				s.closeErr = fmt.Errorf("redisstore: close: %w", err)
			}
		}
	})
	return s.closeErr
}
