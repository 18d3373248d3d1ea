package keyfuncs

import (
	"net/netip"
	"strings"
)

// hopWalk follows a forwarding header from its right end (the hop appended by
// the nearest proxy) to the left, one entry at a time.
type hopWalk struct {
	client *ClientIP
	// hops counts the entries examined, empty ones included.
	hops int
	// last is the last address examined: the client once the walk is done.
	last netip.Addr
}

// skip examines an empty list entry (RFC 9110 lets recipients ignore them) and
// reports whether the walk is done.
func (w *hopWalk) skip() (done bool) {
	w.hops++
	return w.hops >= w.client.maxHops
}

// visit examines one entry and reports whether the walk is done: at the first
// untrusted address (the client), at an entry that is not an address (nothing
// to its left can be believed), or at the cap on hops.
func (w *hopWalk) visit(addr netip.Addr, isAddr bool) (done bool) {
	w.hops++
	if !isAddr {
		return true
	}
	w.last = addr
	return !w.client.trusts(addr) || w.hops >= w.client.maxHops
}

// walkXForwardedFor returns the client that X-Forwarded-For names, or the zero
// Addr. Several header lines form one list, in order.
func (c *ClientIP) walkXForwardedFor(lines []string) netip.Addr {
	w := hopWalk{client: c}
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		for {
			comma := strings.LastIndexByte(line, ',')
			entry := trimOWS(line[comma+1:])
			var done bool
			if entry == "" {
				done = w.skip()
			} else {
				addr, ok := parseNode(entry)
				done = w.visit(addr, ok)
			}
			if done {
				return w.last
			}
			if comma < 0 {
				break
			}
			line = line[:comma]
		}
	}
	return w.last
}

// realIP returns the address in X-Real-IP, or the zero Addr. Of several lines,
// the last (written nearest to this server) counts.
func realIP(lines []string) netip.Addr {
	addr, ok := parseNode(trimOWS(lines[len(lines)-1]))
	if !ok {
		return netip.Addr{}
	}
	return addr
}

// trimOWS trims the optional whitespace (spaces and tabs) of HTTP lists.
func trimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
