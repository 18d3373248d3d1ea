package httplimit

import (
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// KeyFallback is what a limiter does with a request whose key function finds no
// identity: build one with ClientIPFallback, RefuseFallback or SkipFallback, and
// pass it to WithKeyFallback.
type KeyFallback = httpengine.KeyFallback

// ClientIPFallback limits a request without its identity by the key that ip
// returns, typically a keyfuncs.ClientIP's Key method (so that the trusted
// proxies are honoured). A nil ip means the TCP peer's address (IPv6 grouped by
// /64), and one shared key, "ip:unknown", for a peer that is not an IP address
// (a Unix socket). This is the default. A failing ip refuses the request as
// unidentified.
func ClientIPFallback(ip keyfuncs.KeyFunc) KeyFallback { return httpengine.ClientIPFallback(ip) }

// RefuseFallback refuses a request without its identity: it goes to the error
// handler with an error wrapping ErrUnidentified (400 by default).
func RefuseFallback() KeyFallback { return httpengine.RefuseFallback() }

// SkipFallback exempts a request without its identity from this limiter, as a
// skipper would: it is neither decided nor counted. Use it where another limit
// covers such requests (a per-tenant limit under an app-wide per-IP one).
// Construction fails for a stack of several policies, whose other policies the
// skip would lift too.
func SkipFallback() KeyFallback { return httpengine.SkipFallback() }

// FallbackKind names what a limiter did with a request whose key function found
// no identity, as a KeyFallbackObserver hears it. The values are usable as
// metric label values.
type FallbackKind = httpengine.FallbackKind

// The fallbacks.
const (
	// FallbackIP: the request was limited by the fallback key, the client's
	// address by default.
	FallbackIP FallbackKind = httpengine.FallbackIP
	// FallbackRefuse: the request was refused as unidentified (400 by default).
	FallbackRefuse FallbackKind = httpengine.FallbackRefuse
	// FallbackSkip: the request was not limited by this limiter.
	FallbackSkip FallbackKind = httpengine.FallbackSkip
)

// KeyFallbackObserver is an Observer that also hears of every fallback taken,
// with the policy whose key function found no identity, so that fallbacks can be
// counted and logged: OnKeyFallback(r *http.Request, policy string, kind
// FallbackKind) is called on the request's goroutine, before the decision.
// prommetrics' HTTP observer is one.
type KeyFallbackObserver = httpengine.KeyFallbackObserver
