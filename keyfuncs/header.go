package keyfuncs

import (
	"fmt"
	"strings"
)

// Header names a forwarding header that trusted proxies set to tell who their
// client was. The zero value is not a header.
type Header int

const (
	// XForwardedFor is X-Forwarded-For: a comma-separated list of addresses, one
	// appended by each proxy, walked right to left.
	XForwardedFor Header = iota + 1
	// Forwarded is the RFC 7239 Forwarded header: elements such as
	// `for=192.0.2.60;proto=https, for="[2001:db8::17]:4711"`, walked right to left.
	Forwarded
	// XRealIP is X-Real-IP: the one client address that a proxy (nginx's realip
	// setup, typically) writes in place of whatever the client sent.
	XRealIP
)

// String returns the header's field name, such as "X-Forwarded-For".
func (h Header) String() string {
	switch h {
	case XForwardedFor:
		return "X-Forwarded-For"
	case Forwarded:
		return "Forwarded"
	case XRealIP:
		return "X-Real-IP"
	}
	return fmt.Sprintf("Header(%d)", int(h))
}

// canonicalKey is the header's key in an http.Header map.
func (h Header) canonicalKey() string {
	switch h {
	case XForwardedFor:
		return "X-Forwarded-For"
	case Forwarded:
		return "Forwarded"
	case XRealIP:
		return "X-Real-Ip"
	}
	return ""
}

// valid reports whether h is one of the known headers.
func (h Header) valid() bool { return h.canonicalKey() != "" }

// ParseHeader returns the Header named by name, case-insensitively:
// "X-Forwarded-For", "Forwarded" or "X-Real-IP".
func ParseHeader(name string) (Header, error) {
	for _, h := range []Header{XForwardedFor, Forwarded, XRealIP} {
		if strings.EqualFold(strings.TrimSpace(name), h.String()) {
			return h, nil
		}
	}
	return 0, fmt.Errorf("keyfuncs: unknown forwarding header %q (want X-Forwarded-For, Forwarded or X-Real-IP)", name)
}
