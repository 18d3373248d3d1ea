package keyfuncs

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseTrustedProxies parses a comma-separated list of CIDR prefixes and bare
// addresses, such as "10.0.0.0/8, 192.0.2.1, 2001:db8::/32", as given to a
// -trusted-proxies flag. A bare address stands for itself alone (/32 or /128).
// IPv4-mapped IPv6 is written as IPv4 and zones are dropped, as for the addresses
// compared against them. Empty elements are ignored, so "" yields no prefixes. The
// error names the first element that is neither a prefix nor an address, or a
// prefix with host bits set ("10.1.2.3/8" would trust all of 10.0.0.0/8 where
// 10.1.2.3 alone was likely meant).
func ParseTrustedProxies(csv string) ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	for element := range strings.SplitSeq(csv, ",") {
		element = strings.TrimSpace(element)
		if element == "" {
			continue
		}
		prefix, err := parseTrustedProxy(element)
		if err != nil {
			return nil, err
		}
		prefixes = append(prefixes, prefix)
	}
	return prefixes, nil
}

func parseTrustedProxy(element string) (netip.Prefix, error) {
	if strings.Contains(element, "/") {
		prefix, err := netip.ParsePrefix(element)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("keyfuncs: trusted proxy %q: %w", element, err)
		}
		if err := checkMasked(prefix); err != nil {
			return netip.Prefix{}, fmt.Errorf("keyfuncs: trusted proxy %q: %w", element, err)
		}
		return normalizePrefix(prefix), nil
	}
	addr, err := netip.ParseAddr(element)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("keyfuncs: trusted proxy %q is neither a CIDR prefix nor an IP address: %w", element, err)
	}
	addr = normalize(addr)
	return netip.PrefixFrom(addr, addr.BitLen()), nil
}

// checkMasked refuses a prefix with host bits set: trusting it as masked trusts
// the whole network, where a typo of the length ("10.1.2.3/8" for /32) would have
// trusted 16M addresses to set the client's address without a word.
func checkMasked(p netip.Prefix) error {
	if masked := p.Masked(); p != masked {
		return fmt.Errorf("host bits set: write %v for the network, or %v for the address alone",
			masked, netip.PrefixFrom(p.Addr(), p.Addr().BitLen()))
	}
	return nil
}

// normalizePrefix masks a prefix and rewrites an IPv4-mapped IPv6 prefix
// (::ffff:10.0.0.0/104) as the IPv4 prefix it covers (10.0.0.0/8), because
// addresses are unmapped before they are compared. An invalid prefix stays
// invalid.
func normalizePrefix(p netip.Prefix) netip.Prefix {
	if !p.IsValid() {
		return p
	}
	addr := p.Addr().WithZone("")
	bits := p.Bits()
	if addr.Is4In6() && bits >= 96 {
		addr, bits = addr.Unmap(), bits-96
	}
	return netip.PrefixFrom(addr, bits).Masked()
}
