package keyfuncs

import (
	"net/netip"
	"strings"
)

// walkForwarded returns the client that the RFC 7239 Forwarded header names,
// or the zero Addr. Each element's "for" parameter is one hop; several header
// lines form one list, in order. Elements are cut at commas outside quoted
// strings, scanning from the right, so that a client's malformed text on the
// left cannot change how the hops that trusted proxies appended are read.
func (c *ClientIP) walkForwarded(lines []string) netip.Addr {
	w := hopWalk{client: c}
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		for {
			rest, element, more, ok := cutLastElement(line)
			if !ok {
				return w.last // unbalanced quotes: nothing here can be believed
			}
			element = trimOWS(element)
			var done bool
			if element == "" {
				done = w.skip()
			} else {
				addr, isAddr := forwardedFor(element)
				done = w.visit(addr, isAddr)
			}
			if done {
				return w.last
			}
			if !more {
				break
			}
			line = rest
		}
	}
	return w.last
}

// cutLastElement cuts s at its last comma outside a quoted string. It returns
// the text before that comma (more is true when there is a comma) and the
// element after it. ok is false when quotes are unbalanced.
func cutLastElement(s string) (rest, element string, more, ok bool) {
	inQuote := false
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case '"':
			backslashes := 0
			for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
				backslashes++
			}
			if backslashes%2 == 0 {
				inQuote = !inQuote
			}
		case ',':
			if !inQuote {
				return s[:i], s[i+1:], true, true
			}
		}
	}
	if inQuote {
		return "", "", false, false
	}
	return "", s, false, true
}

// forwardedFor returns the address in the "for" parameter of one Forwarded
// element, such as `for="[2001:db8::17]:4711";proto=https`. Parameter names are
// case-insensitive. isAddr is false when the element has no "for", has it twice
// (ambiguous), is malformed, or names "unknown" or an obfuscated "_id".
func forwardedFor(element string) (addr netip.Addr, isAddr bool) {
	var value string
	seen := false
	for element != "" {
		pair, rest, ok := cutPair(element)
		if !ok {
			return netip.Addr{}, false
		}
		element = rest
		pair = trimOWS(pair)
		if pair == "" {
			continue
		}
		eq := strings.IndexByte(pair, '=')
		if eq < 0 {
			return netip.Addr{}, false
		}
		if !strings.EqualFold(trimOWS(pair[:eq]), "for") {
			continue
		}
		if seen {
			return netip.Addr{}, false
		}
		seen, value = true, trimOWS(pair[eq+1:])
	}
	if !seen {
		return netip.Addr{}, false
	}
	node, ok := unquote(value)
	if !ok {
		return netip.Addr{}, false
	}
	return parseNode(node)
}

// cutPair cuts a Forwarded element at its first semicolon outside a quoted
// string. ok is false when a quoted string is not closed.
func cutPair(s string) (pair, rest string, ok bool) {
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++ // a quoted-pair: the next byte is literal
		case c == '"':
			inQuote = !inQuote
		case c == ';' && !inQuote:
			return s[:i], s[i+1:], true
		}
	}
	if inQuote {
		return "", "", false
	}
	return s, "", true
}

// unquote returns the text of a token or of an RFC 9110 quoted-string, whose
// quoted-pairs (backslash escapes) it resolves.
func unquote(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	if v[0] != '"' {
		return v, true
	}
	if len(v) < 2 || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if !strings.ContainsAny(inner, `\"`) {
		return inner, true
	}
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		switch c := inner[i]; c {
		case '\\':
			i++
			if i == len(inner) {
				return "", false
			}
			b.WriteByte(inner[i])
		case '"':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
