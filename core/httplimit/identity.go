package httplimit

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// ErrUnidentified is wrapped by the error of a request whose key could not be
// found: its key function failed with an error other than keyfuncs.ErrNoKey, or
// it failed and no fallback key was configured (WithKeyFallback(nil)). The default
// error handlers answer it with 400.
var ErrUnidentified = errors.New("httplimit: request could not be identified")

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

// defaultFallback keys a request by its TCP peer (IPv6 grouped by /64), or by
// UnknownPeerKey when the peer is not an IP address.
func defaultFallback() KeyFunc {
	peer := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	return func(r *http.Request) (string, error) {
		key, err := peer.Key(r)
		if err != nil {
			return UnknownPeerKey, nil
		}
		return key, nil
	}
}

// keyOf runs rule's key function and falls back as configured. It reports whether
// the fallback key was used.
func (l *Limiter) keyOf(ru *rule, r *http.Request, policy string) (key string, fellBack bool, err error) {
	key, err = ru.key(r)
	if err == nil && len(key) > 0 && len(key) <= core.MaxKeyLength {
		return key, false, nil
	}
	if err != nil && !errors.Is(err, keyfuncs.ErrNoKey) {
		return "", false, fmt.Errorf("%w: policy %q: %w", ErrUnidentified, policy, err)
	}
	if l.fallback == nil {
		if err == nil {
			err = fmt.Errorf("key length %d is outside 1..%d", len(key), core.MaxKeyLength)
		}
		return "", false, fmt.Errorf("%w: policy %q: %w", ErrUnidentified, policy, err)
	}
	key, err = l.fallback(r)
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
