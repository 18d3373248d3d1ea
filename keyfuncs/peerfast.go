package keyfuncs

import "strings"

// ipv4PeerKey returns the key of a TCP peer written "a.b.c.d:port" with the
// address in canonical dotted decimal (no leading zeros), the common RemoteAddr:
// "ip:" and the address as written, which is what parsing it and printing it back
// gives. It reports false for every other spelling (IPv6, brackets, zones,
// garbage), which the general path handles. Only for a ClientIP that trusts no
// proxy, whose client is the TCP peer.
func ipv4PeerKey(remoteAddr string) (string, bool) {
	colon := strings.IndexByte(remoteAddr, ':')
	if colon < 0 || !validPort(remoteAddr[colon:]) || !canonicalIPv4(remoteAddr[:colon]) {
		return "", false
	}
	return "ip:" + remoteAddr[:colon], true
}

// canonicalIPv4 reports whether s is four decimal fields of 0 to 255 separated by
// dots, without leading zeros: the form net/netip parses as IPv4 and prints.
func canonicalIPv4(s string) bool {
	dots, value, digits := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			if digits > 0 && value == 0 {
				return false // a leading zero
			}
			value, digits = value*10+int(c-'0'), digits+1
			if value > 255 {
				return false
			}
		case c == '.':
			if digits == 0 || dots == 3 {
				return false
			}
			dots, value, digits = dots+1, 0, 0
		default:
			return false
		}
	}
	return dots == 3 && digits > 0
}
