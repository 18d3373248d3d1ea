package httpengine

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// ErrUnidentified is wrapped by the error of a request whose key could not be
// found (see httplimit.ErrUnidentified). ErrorResponse answers it with 400, or
// 413 for a body over a size limit.
var ErrUnidentified = errors.New("httplimit: request could not be identified")

// ErrCostTooHigh is wrapped by the error of a request whose cost, from the cost
// function (WithCostFunc), is more than one of its policies ever admits (see
// httplimit.ErrCostTooHigh). The cost comes from the request (the size of a batch,
// say), so it is the client's: ErrorResponse answers it with 400, and it is logged
// at debug. Retrying never helps, so it is no 429.
var ErrCostTooHigh = errors.New("httplimit: the request costs more than its policy ever admits")

// UnknownPeerKey is the key of requests whose TCP peer is not an IP address (a
// Unix socket, say) when the default fallback key is in use: they share one bucket.
const UnknownPeerKey = "ip:unknown"

// PeerAddr is the TCP peer's address (r.RemoteAddr), IPv4-mapped addresses
// unmapped and zones dropped. It ignores every forwarding header.
func PeerAddr(r *http.Request) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		a, err2 := netip.ParseAddr(r.RemoteAddr)
		if err2 != nil {
			return netip.Addr{}, fmt.Errorf("httplimit: RemoteAddr %q is not an address: %w", truncate(r.RemoteAddr, 64), err)
		}
		return a.Unmap().WithZone(""), nil
	}
	return ap.Addr().Unmap().WithZone(""), nil
}

// FallbackKind names what a Limiter did with a request whose key function found
// no identity (see httplimit.FallbackKind).
type FallbackKind string

// The fallbacks (see httplimit.FallbackIP).
const (
	FallbackIP     FallbackKind = "ip"     // limited by the fallback key
	FallbackRefuse FallbackKind = "refuse" // refused as unidentified
	FallbackSkip   FallbackKind = "skip"   // not limited by this Limiter
)

// KeyFallback is what a Limiter does with a request whose key function finds no
// identity (see httplimit.WithKeyFallback).
type KeyFallback interface {
	keyFallback() *keyFallback
}

// keyFallback is the one implementation of KeyFallback.
type keyFallback struct {
	kind FallbackKind
	key  keyfuncs.KeyFunc // the fallback key function, for FallbackIP
}

func (f *keyFallback) keyFallback() *keyFallback { return f }

// ClientIPFallback limits a request without its identity by the key that ip
// returns; nil means the TCP peer's address, or UnknownPeerKey (see
// httplimit.ClientIPFallback).
func ClientIPFallback(ip keyfuncs.KeyFunc) KeyFallback {
	if ip == nil {
		ip = peerFallback()
	}
	return &keyFallback{kind: FallbackIP, key: ip}
}

// RefuseFallback refuses a request without its identity (see
// httplimit.RefuseFallback).
func RefuseFallback() KeyFallback { return &keyFallback{kind: FallbackRefuse} }

// SkipFallback exempts a request without its identity from this Limiter (see
// httplimit.SkipFallback). New refuses it for a stack of several policies.
func SkipFallback() KeyFallback { return &keyFallback{kind: FallbackSkip} }

// KeyFallbackObserver is an Observer that also hears of every fallback taken,
// with the policy whose key function found no identity, so that fallbacks can be
// counted and logged (see httplimit.KeyFallbackObserver). The Limiter calls
// OnKeyFallback on the request's goroutine, before the decision (FallbackIP), the
// error (FallbackRefuse) or the exemption (FallbackSkip).
type KeyFallbackObserver interface {
	Observer
	OnKeyFallback(r *http.Request, policy string, kind FallbackKind)
}

// errSkip tells Start that the fallback exempts the request.
var errSkip = errors.New("httplimit: request exempt by SkipFallback")

// peerFallback keys a request by its TCP peer (IPv6 grouped by /64), or by
// UnknownPeerKey when the peer is not an IP address.
func peerFallback() keyfuncs.KeyFunc {
	peer := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	return func(r *http.Request) (string, error) {
		key, err := peer.Key(r)
		if err != nil {
			return UnknownPeerKey, nil
		}
		return key, nil
	}
}

// defaultFallback is the fallback when WithKeyFallback is not given.
func defaultFallback() *keyFallback { return ClientIPFallback(nil).keyFallback() }

// checkFallback fails for a fallback that cannot serve the rules.
func (l *Limiter) checkFallback() error {
	if l.fallback.kind == FallbackSkip && len(l.rules) > 1 {
		return errors.New("httplimit: WithKeyFallback(SkipFallback()): a stack of several policies cannot skip one; " +
			"a request without an identity would escape the others too (use ClientIPFallback or RefuseFallback)")
	}
	return nil
}

// keyOf runs rule's key function and falls back as configured. It reports whether
// the fallback key was used; it returns errSkip when the fallback exempts the
// request.
func (l *Limiter) keyOf(ru *rule, r *http.Request, policy string) (key string, fellBack bool, err error) {
	key, err = ru.key(r)
	if err == nil && len(key) > 0 && len(key) <= core.MaxKeyLength {
		return key, false, nil
	}
	if err != nil && !errors.Is(err, keyfuncs.ErrNoKey) {
		return "", false, fmt.Errorf("%w: policy %q: %w", ErrUnidentified, policy, err)
	}
	if err == nil {
		err = fmt.Errorf("key length %d is outside 1..%d", len(key), core.MaxKeyLength)
	}
	if o, ok := l.observer.(KeyFallbackObserver); ok {
		o.OnKeyFallback(r, policy, l.fallback.kind)
	}
	l.logFallback(r, policy)
	switch l.fallback.kind {
	case FallbackSkip:
		return "", false, errSkip
	case FallbackIP:
	default:
		return "", false, fmt.Errorf("%w: policy %q: %w", ErrUnidentified, policy, err)
	}
	key, err = l.fallback.key(r)
	if err != nil || len(key) == 0 || len(key) > core.MaxKeyLength {
		if err == nil {
			err = fmt.Errorf("fallback key length %d is outside 1..%d", len(key), core.MaxKeyLength)
		}
		return "", false, fmt.Errorf("%w: policy %q: fallback key: %w", ErrUnidentified, policy, err)
	}
	return key, true, nil
}

// truncate shortens s to at most n bytes for error messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// logFallback logs at debug that r's key function for policy found no identity and
// which fallback was taken: with the route, never the raw path or any key, which may
// carry identities.
func (l *Limiter) logFallback(r *http.Request, policy string) {
	logger := l.errorLog.logger
	if !logger.Enabled(r.Context(), slog.LevelDebug) {
		return
	}
	logger.LogAttrs(r.Context(), slog.LevelDebug, "rate limit: no identity, key fallback taken",
		slog.String("policy", policy), slog.String("fallback", string(l.fallback.kind)),
		slog.String("method", r.Method), slog.String("route", r.Pattern))
}
