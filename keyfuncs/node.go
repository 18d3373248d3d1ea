package keyfuncs

import (
	"net/netip"
	"strings"
)

// parseNode parses one hop of a forwarding header or a RemoteAddr: an IP
// address, optionally with a port ("192.0.2.1:8080", "[2001:db8::1]:443"), or a
// bare IPv6 address. The address is normalized: IPv4-mapped IPv6 becomes IPv4
// and any zone is dropped, so that no spelling of an address can escape a
// trusted prefix or a key. Anything else, including RFC 7239's "unknown" and
// obfuscated identifiers ("_hidden"), is not an address.
func parseNode(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 || !validPort(s[end+1:]) {
			return netip.Addr{}, false
		}
		addr, err := netip.ParseAddr(s[1:end])
		if err != nil || !addr.Is6() {
			return netip.Addr{}, false
		}
		return normalize(addr), true
	}
	// One colon: an IPv4 address with a port. Checked before parsing the whole
	// string as an address, so that the common "ip:port" RemoteAddr does not
	// cost a failed parse (and its error allocation).
	if colon := strings.IndexByte(s, ':'); colon >= 0 && strings.LastIndexByte(s, ':') == colon {
		if !validPort(s[colon:]) {
			return netip.Addr{}, false
		}
		addr, err := netip.ParseAddr(s[:colon])
		if err != nil || !addr.Is4() {
			return netip.Addr{}, false
		}
		return addr, true
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return normalize(addr), true
}

// validPort reports whether s is empty or ":" followed by a port: 1 to 5
// digits of at most 65535, or an RFC 7239 obfuscated port ("_" then letters,
// digits, ".", "_" or "-").
func validPort(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != ':' || len(s) == 1 {
		return false
	}
	port := s[1:]
	if port[0] == '_' {
		return len(port) > 1 && isObfuscated(port[1:])
	}
	if len(port) > 5 {
		return false
	}
	value := 0
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
		value = value*10 + int(port[i]-'0')
	}
	return value <= 65535
}

// isObfuscated reports whether s uses only the characters of RFC 7239
// obfuscated identifiers: ALPHA, DIGIT, ".", "_" and "-".
func isObfuscated(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// normalize unmaps IPv4-mapped IPv6 addresses and drops zones.
func normalize(addr netip.Addr) netip.Addr {
	return addr.Unmap().WithZone("")
}
