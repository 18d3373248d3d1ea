package keyfuncs

import (
	"net/netip"
	"strconv"
	"testing"
)

// FuzzIPv4PeerKey checks the fast path against the general one: for any
// RemoteAddr it accepts, the key is the one Addr and KeyFor give, and every
// canonical IPv4 "address:port" is accepted.
func FuzzIPv4PeerKey(f *testing.F) {
	for _, seed := range []string{
		"203.0.113.9:51234", "0.0.0.0:0", "255.255.255.255:65535", "1.2.3.4:_obf", "1.2.3.4:",
		"01.2.3.4:1", "1.2.3.256:1", "1.2.3:1", "1.2.3.4.5:1", "1..3.4:1", ".1.2.3:1", "1.2.3.4:123456",
		"1.2.3.4:1:2", "[1.2.3.4]:1", "1.2.3.4", "::ffff:1.2.3.4", "1.2.3.4%eth0:1", "", ":", "a.b.c.d:1",
	} {
		f.Add(seed)
	}
	c := mustClientIP(f, ClientIPConfig{})
	f.Fuzz(func(t *testing.T, remoteAddr string) {
		addr, err := c.Addr(newRequest(remoteAddr))
		key, ok := ipv4PeerKey(remoteAddr)
		if ok {
			if err != nil {
				t.Fatalf("fast key %q for %q, which Addr refuses: %v", key, remoteAddr, err)
			}
			if want := c.KeyFor(addr); key != want {
				t.Fatalf("fast key %q for %q, want %q", key, remoteAddr, want)
			}
			return
		}
		if ap, err := netip.ParseAddrPort(remoteAddr); err == nil && ap.Addr().Is4() && ap.Addr().String()+":"+strconv.Itoa(int(ap.Port())) == remoteAddr {
			t.Fatalf("canonical IPv4 peer %q not taken by the fast path", remoteAddr)
		}
	})
}
