package resilient

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// loudLogInterval keeps the logs of a repeated error (a store that rejects every call,
// a Monitor that panics on every event) to one per interval, so that they do not
// flood the log; the metrics count every permanent error.
const loudLogInterval = time.Second

// due reports whether a repeated error's log is due, and if so marks it logged at
// now: at most one per loudLogInterval, whatever the number of goroutines.
func due(at *atomic.Int64) bool {
	now := time.Now().UnixNano()
	last := at.Load()
	return (last == 0 || now-last >= int64(loudLogInterval)) && at.CompareAndSwap(last, now)
}

// recoverMonitor, deferred around each call of a Monitor method, recovers a panic
// and logs it at error with its stack, at most once per loudLogInterval. A bug in
// metrics code must not change a decision or leave one half made, nor crash the
// prober's goroutine, which reports its calls during an outage: on every instance at
// once.
func (s *Store) recoverMonitor(method string) {
	r := recover()
	if r == nil || !due(&s.buggyAt) {
		return
	}
	s.cfg.logger.Error("ratelimit: a Monitor panicked; the store went on without it",
		"store", s.cfg.storeName, "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
}

func (s *Store) onDecision(m Monitor, e *DecisionEvent) {
	defer s.recoverMonitor("OnDecision")
	m.OnDecision(e)
}

func (s *Store) onLocalRefusal(m Monitor, e *LocalRefusalEvent) {
	defer s.recoverMonitor("OnLocalRefusal")
	m.OnLocalRefusal(e)
}

func (s *Store) onStoreCall(m Monitor, e *StoreCallEvent) {
	defer s.recoverMonitor("OnStoreCall")
	m.OnStoreCall(e)
}

func (s *Store) onFallback(m Monitor, e *FallbackEvent) {
	defer s.recoverMonitor("OnFallback")
	m.OnFallback(e)
}

// decided reports one policy's part of a decision to the observers and, sampled, to
// the log at debug level: decisions never reach an info log.
func (s *Store) decided(req *core.Request, o Outcome, via Via) {
	if len(s.cfg.observers) > 0 {
		e := DecisionEvent{Policy: req.Policy.Name(), KeyType: keyType(req.Key), Cost: req.EffectiveCost(), Outcome: o, Via: via}
		for _, obs := range s.cfg.observers {
			s.onDecision(obs, &e)
		}
	}
	if every := s.cfg.logEvery; every > 0 && s.decisions.Add(1)%every == 0 &&
		s.cfg.logger.Enabled(context.Background(), slog.LevelDebug) {
		s.cfg.logger.Debug("ratelimit: decision", "policy", req.Policy.Name(), "key_type", keyType(req.Key),
			"cost", req.EffectiveCost(), "result", string(o), "mode", string(via))
	}
}

// localRefusal reports a request the pre-limiter refused.
func (s *Store) localRefusal(req *core.Request, res *core.Result) {
	if len(s.cfg.observers) == 0 {
		return
	}
	e := LocalRefusalEvent{Policy: req.Policy.Name(), KeyType: keyType(req.Key), Cost: req.EffectiveCost(), RetryAfter: res.RetryAfter}
	for _, obs := range s.cfg.observers {
		s.onLocalRefusal(obs, &e)
	}
}

// storeCall reports a finished shared-store call.
func (s *Store) storeCall(latency time.Duration, kind ErrorKind, err error) {
	if len(s.cfg.observers) == 0 {
		return
	}
	e := StoreCallEvent{Store: s.cfg.storeName, Latency: latency, Kind: kind, Err: err}
	for _, obs := range s.cfg.observers {
		s.onStoreCall(obs, &e)
	}
}

// enterFallback records that policy's failure mode decided at now, and logs and
// reports it when the policy enters its failure mode.
func (s *Store) enterFallback(policy string, mode Mode, cause error, now int64) {
	if !s.falls.enter(policy, mode, now) {
		return
	}
	s.cfg.logger.Warn("ratelimit: shared store failing; policy "+policy+" falls back to "+string(mode)+" mode",
		"store", s.cfg.storeName, "policy", policy, "mode", string(mode), "cause", cause.Error())
	e := FallbackEvent{Policy: policy, Mode: mode, Active: true, Cause: cause}
	for _, obs := range s.cfg.observers {
		s.onFallback(obs, &e)
	}
}

// recovered ends every policy's fallback at now: the shared store answered again.
func (s *Store) recovered(now int64) {
	for _, l := range s.falls.leaveAll(now) {
		s.cfg.logger.Warn("ratelimit: policy "+l.policy+" back on the shared store after "+roundDuration(l.after),
			"store", s.cfg.storeName, "policy", l.policy, "mode", string(l.mode), "fallback_duration", l.after)
		e := FallbackEvent{Policy: l.policy, Mode: l.mode, Duration: l.after}
		for _, obs := range s.cfg.observers {
			s.onFallback(obs, &e)
		}
	}
}

// breakerChanged logs a change of a breaker's state (slot -1: the store-wide one):
// opening and closing at warn, probing at debug.
func (s *Store) breakerChanged(tr *transition, slot int) {
	if tr == nil {
		return
	}
	log := s.cfg.logger
	which := "circuit breaker"
	if slot >= 0 {
		which = "circuit breaker of hash slot " + strconv.Itoa(slot) // a Cluster slot, or the same hashing on one server
	}
	switch {
	case tr.atCheck:
		log.Warn(fmt.Sprintf("ratelimit: start-up check: shared store unreachable; %s open, next probe in %v", which, s.cfg.cooldown),
			"store", s.cfg.storeName, "slot", slot, "cooldown", s.cfg.cooldown)
	case tr.to == BreakerOpen && tr.from == BreakerClosed:
		log.Warn(fmt.Sprintf("ratelimit: shared store failing; %s open, next probe in %v", which, s.cfg.cooldown),
			"store", s.cfg.storeName, "slot", slot, "failures", tr.failures, "calls", tr.calls, "in_a_row", tr.inARow, "cooldown", s.cfg.cooldown)
	case tr.to == BreakerClosed:
		log.Warn("ratelimit: shared store back after "+roundDuration(tr.after)+"; "+which+" closed",
			"store", s.cfg.storeName, "slot", slot, "outage", tr.after)
	case tr.to == BreakerHalfOpen:
		log.Debug("ratelimit: "+which+" half-open: a probe succeeded", "store", s.cfg.storeName, "slot", slot)
	default:
		log.Debug("ratelimit: probe failed; "+which+" open again", "store", s.cfg.storeName, "slot", slot, "cooldown", s.cfg.cooldown)
	}
}

// stuckMaster logs that the keys of node, a master that slot's opening found stuck,
// now follow their failure modes ("" when no master became stuck).
func (s *Store) stuckMaster(node string, slot int) {
	if node == "" {
		return
	}
	s.cfg.logger.Warn("ratelimit: shared store failing; every key of master "+node+" follows its failure mode until its slots' probes succeed",
		"store", s.cfg.storeName, "master", node, "slot", slot)
}

// logPermanent logs a permanent store error at error level, at most once per
// loudLogInterval.
func (s *Store) logPermanent(names string, err error) {
	if !due(&s.loudAt) {
		return
	}
	s.cfg.logger.Error("ratelimit: the shared store failed permanently; no failure mode decides around it: a decision returns the error, a lease is held there until its timeout",
		"store", s.cfg.storeName, "policies", names, "error", err.Error())
}

// keyType is the kind of a rate-limit key, for logs and metrics: the part before its
// first ':' ("ip", "ip6", "ak", "user", "field", …) when that is 1 to 16 lowercase
// letters, digits, '_' or '-', and "other" otherwise. It never returns more of the
// key, which may identify a person or hold a secret.
func keyType(key string) string {
	i := strings.IndexByte(key, ':')
	if i < 1 || i > 16 {
		return "other"
	}
	for j := 0; j < i; j++ {
		c := key[j]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "other"
		}
	}
	return key[:i]
}

// roundDuration renders d for a log message: to 0.1s from a second on, to the
// millisecond below ("3.2s", "250ms").
func roundDuration(d time.Duration) string {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
