package keyfuncs

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
)

// Defaults of ClientIPConfig.
const (
	// DefaultMaxHops is the default cap on the hops of a forwarding header walked.
	DefaultMaxHops = 16
	// DefaultIPv6Prefix is the default grouping of IPv6 clients: one key per /64,
	// the block a single subscriber or host usually gets.
	DefaultIPv6Prefix = 64
)

// ErrNoClientIP reports a request whose TCP peer address (r.RemoteAddr) is not
// an IP address, as on a Unix socket. It wraps ErrNoKey.
var ErrNoClientIP = fmt.Errorf("%w: RemoteAddr is not an IP address", ErrNoKey)

// ErrUnidentifiedClient reports a request that a trusted proxy forwarded without
// a usable forwarding header while ClientIPConfig.RequireHeader is set. It does
// not wrap ErrNoKey: the user chose to refuse such requests rather than limit
// them by the proxy's address.
var ErrUnidentifiedClient = errors.New("keyfuncs: trusted proxy forwarded no client address")

// ClientIPConfig configures NewClientIP. The zero value trusts no proxy: the
// client is the TCP peer and every forwarding header is ignored.
type ClientIPConfig struct {
	// TrustedProxies lists the addresses of your own reverse proxies and load
	// balancers (see ParseTrustedProxies). Forwarding headers are honoured only
	// on connections from one of them, and only the hops they appended are
	// believed. Every address inside these prefixes is trusted to write
	// forwarding headers, so list your proxies, not whole client networks. A
	// prefix with host bits set (netip.PrefixFrom(addr, 24) of a host's address)
	// is refused: write the network, or the address's /32 or /128.
	// Default: none, so only the TCP peer (r.RemoteAddr) counts.
	TrustedProxies []netip.Prefix
	// Header names the one forwarding header that the trusted proxies set
	// (default XForwardedFor). Only that header is read; a client's own copy of
	// any other forwarding header is ignored, so that a client behind a proxy that
	// sets Forwarded cannot pick its key with an X-Forwarded-For of its own. Name
	// the header your proxies append to (X-Forwarded-For, Forwarded) or overwrite
	// (X-Real-IP).
	Header Header
	// MaxHops caps the hops of a header walked right to left (default
	// DefaultMaxHops). When the cap is reached, the last hop examined is the
	// client: nothing further left, which the client could have written.
	MaxHops int
	// IPv6Prefix is the prefix length that groups IPv6 clients into one key for
	// Key (default DefaultIPv6Prefix, 64), so that rotating addresses inside one
	// allocation gains nothing. 128 keys each address apart.
	IPv6Prefix int
	// RequireHeader makes Addr return ErrUnidentifiedClient, instead of the
	// proxy's own address, when a trusted proxy's request carries no forwarding
	// header that yields an address.
	RequireHeader bool
}

// ClientIP finds the address of the client that sent a request, believing
// forwarding headers only as far as trusted proxies wrote them. It is
// immutable and safe for concurrent use.
//
// The TCP peer (r.RemoteAddr) is the client unless it is a trusted proxy. Then
// the configured header (ClientIPConfig.Header) is walked from the right
// (the hop the nearest proxy appended) to the left: trusted hops are passed, and
// the first untrusted address is the client. The walk stops at an entry that is
// not an address (garbage, "unknown", an obfuscated "_id"), and after MaxHops
// entries; then the last address examined is the client (the leftmost proxy
// reached). X-Real-IP holds one address (of several lines, the last counts).
// A header that yields no address at all leaves the TCP peer as the client
// (ErrUnidentifiedClient with RequireHeader). Addresses are normalized:
// IPv4-mapped IPv6 becomes IPv4 and zones are dropped.
type ClientIP struct {
	trusted       []netip.Prefix
	header        Header
	maxHops       int
	ipv6Prefix    int
	requireHeader bool
	peerKeys      *peerKeyCache // nil when proxies are trusted
}

// NewClientIP validates cfg, fills its defaults and returns the ClientIP. The
// error names the first invalid field.
func NewClientIP(cfg ClientIPConfig) (*ClientIP, error) {
	c := &ClientIP{
		maxHops:       cfg.MaxHops,
		ipv6Prefix:    cfg.IPv6Prefix,
		requireHeader: cfg.RequireHeader,
	}
	for i, p := range cfg.TrustedProxies {
		if !p.IsValid() {
			return nil, fmt.Errorf("keyfuncs: ClientIPConfig.TrustedProxies[%d] is not a valid prefix", i)
		}
		if err := checkMasked(p); err != nil {
			return nil, fmt.Errorf("keyfuncs: ClientIPConfig.TrustedProxies[%d] %v: %w", i, p, err)
		}
		c.trusted = append(c.trusted, normalizePrefix(p))
	}
	c.header = cfg.Header
	if c.header == 0 {
		c.header = XForwardedFor
	}
	if !c.header.valid() {
		return nil, fmt.Errorf("keyfuncs: ClientIPConfig.Header is not a known forwarding header: %v", cfg.Header)
	}
	switch {
	case c.maxHops == 0:
		c.maxHops = DefaultMaxHops
	case c.maxHops < 0:
		return nil, fmt.Errorf("keyfuncs: ClientIPConfig.MaxHops is %d; want a positive number (0 means %d)", cfg.MaxHops, DefaultMaxHops)
	}
	switch {
	case c.ipv6Prefix == 0:
		c.ipv6Prefix = DefaultIPv6Prefix
	case c.ipv6Prefix < 1 || c.ipv6Prefix > 128:
		return nil, fmt.Errorf("keyfuncs: ClientIPConfig.IPv6Prefix is %d; want 1 to 128 (0 means %d)", cfg.IPv6Prefix, DefaultIPv6Prefix)
	}
	if len(c.trusted) == 0 {
		c.peerKeys = newPeerKeyCache()
	}
	return c, nil
}

// MustClientIP is NewClientIP for static configuration: it panics on an error.
func MustClientIP(cfg ClientIPConfig) *ClientIP {
	c, err := NewClientIP(cfg)
	if err != nil {
		panic(err)
	}
	return c
}

// Addr returns the client's address: valid, IPv4-mapped IPv6 unmapped, zone
// dropped. Forwarding headers that are absent, garbage or written by anyone
// but a trusted proxy leave the TCP peer as the client. The error is
// ErrNoClientIP when r.RemoteAddr is not an address, and ErrUnidentifiedClient
// as RequireHeader says.
func (c *ClientIP) Addr(r *http.Request) (netip.Addr, error) {
	peer, ok := parseNode(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%w: %q", ErrNoClientIP, truncate(r.RemoteAddr, 64))
	}
	if !c.trusts(peer) {
		return peer, nil
	}
	if client := c.forwardedClient(r.Header); client.IsValid() {
		return client, nil
	}
	if c.requireHeader {
		return netip.Addr{}, fmt.Errorf("%w: from %v", ErrUnidentifiedClient, peer)
	}
	return peer, nil
}

// Key returns the client's key: "ip:203.0.113.9" for IPv4, and the client's
// IPv6Prefix block for IPv6, such as "ip6:2001:db8:1:2::/64". An IPv6 address
// that stands for an IPv4 host (NAT64's well-known prefix 64:ff9b::/96, SIIT's
// ::ffff:0:0:0/96, 6to4 and Teredo) is keyed as that host: 64:ff9b::203.0.113.9 and every address of
// 2002:cb00:7109::/48 give "ip:203.0.113.9". Errors are those of Addr. When no
// proxy is trusted, Key remembers the keys of recent peers by their exact
// r.RemoteAddr, so that the requests of a keep-alive connection are keyed
// without parsing the address or allocating the key again.
func (c *ClientIP) Key(r *http.Request) (string, error) {
	if c.peerKeys == nil {
		addr, err := c.Addr(r)
		if err != nil {
			return "", err
		}
		return c.KeyFor(addr), nil
	}
	// No proxy is trusted: the client is the TCP peer, whose key depends on
	// r.RemoteAddr alone.
	key, slot, hash := c.peerKeys.lookup(r.RemoteAddr)
	if slot == nil {
		return key, nil
	}
	key, ok := ipv4PeerKey(r.RemoteAddr)
	if !ok {
		addr, err := c.Addr(r)
		if err != nil {
			return "", err
		}
		key = c.KeyFor(addr)
	}
	c.peerKeys.remember(slot, hash, r.RemoteAddr, key)
	return key, nil
}

// KeyFor returns the key Key gives a client at addr (normalized first). The
// zero Addr, which Addr never returns, gives "ip:invalid".
func (c *ClientIP) KeyFor(addr netip.Addr) string {
	if !addr.IsValid() {
		return "ip:invalid"
	}
	addr = keyedHost(normalize(addr))
	var buf [64]byte
	if addr.Is4() {
		return string(addr.AppendTo(append(buf[:0], "ip:"...)))
	}
	block := netip.PrefixFrom(addr, c.ipv6Prefix).Masked()
	return string(block.AppendTo(append(buf[:0], "ip6:"...)))
}

// Subnet returns a KeyFunc that keys a request by the client's network, for
// policies that limit a whole subnet (the wider abuse of a login form, say):
// "net4:203.0.113.0/24" for IPv4 with v4Bits 24, "net6:2001:db8:1::/56" for
// IPv6 with v6Bits 56. It finds the client as Addr does; an IPv6 address that
// stands for an IPv4 host (see Key) is in that host's IPv4 network. v4Bits must
// be 1 to 32 and v6Bits 1 to 128.
func (c *ClientIP) Subnet(v4Bits, v6Bits int) (KeyFunc, error) {
	if v4Bits < 1 || v4Bits > 32 {
		return nil, fmt.Errorf("keyfuncs: Subnet IPv4 prefix length %d is outside 1..32", v4Bits)
	}
	if v6Bits < 1 || v6Bits > 128 {
		return nil, fmt.Errorf("keyfuncs: Subnet IPv6 prefix length %d is outside 1..128", v6Bits)
	}
	return func(r *http.Request) (string, error) {
		addr, err := c.Addr(r)
		if err != nil {
			return "", err
		}
		addr = keyedHost(addr)
		var buf [64]byte
		if addr.Is4() {
			block := netip.PrefixFrom(addr, v4Bits).Masked()
			return string(block.AppendTo(append(buf[:0], "net4:"...))), nil
		}
		block := netip.PrefixFrom(addr, v6Bits).Masked()
		return string(block.AppendTo(append(buf[:0], "net6:"...))), nil
	}, nil
}

// forwardedClient returns the client named by the configured forwarding header,
// or the zero Addr when it names none. Other forwarding headers are never read.
func (c *ClientIP) forwardedClient(header http.Header) netip.Addr {
	lines := header[c.header.canonicalKey()]
	if len(lines) == 0 {
		return netip.Addr{}
	}
	switch c.header {
	case XForwardedFor:
		return c.walkXForwardedFor(lines)
	case Forwarded:
		return c.walkForwarded(lines)
	case XRealIP:
		return realIP(lines)
	}
	return netip.Addr{}
}

// trusts reports whether addr is one of the trusted proxies.
func (c *ClientIP) trusts(addr netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// truncate bounds s for an error message.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
