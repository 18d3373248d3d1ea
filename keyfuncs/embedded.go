package keyfuncs

import "net/netip"

// keyedHost returns the address a client at addr (normalized) is keyed by: the
// IPv4 host an IPv6 address stands for, else addr itself. Four kinds of IPv6
// address carry their IPv4 host in fixed bits:
//
//   - NAT64's well-known prefix, 64:ff9b::/96 (RFC 6052): an IPv4 client seen
//     through a translator. Grouped by /64, every IPv4 client of the translator
//     would share one key.
//   - IPv4-translated addresses, ::ffff:0:0:0/96 (RFC 2765's SIIT): an IPv4
//     host behind a stateless translator, in the last 32 bits. Grouped by /64,
//     every host of the translator would share one key.
//   - 6to4, 2002::/16 (RFC 3056): the site behind IPv4 host V owns 2002:V::/48.
//     Grouped by /64, that one host would have 65,536 keys.
//   - Teredo, 2001:0::/32 (RFC 4380): the client's public IPv4, inverted, in the
//     last 32 bits. Grouped by /64, every client of a Teredo server would share
//     one key.
//
// Keyed as their IPv4 host, each is limited as that host would be over IPv4.
// A network-specific NAT64 prefix (such as 64:ff9b:1::/48) places the IPv4 host
// where its operator chose, so it is keyed as any IPv6 address.
func keyedHost(addr netip.Addr) netip.Addr {
	if !addr.Is6() {
		return addr
	}
	b := addr.As16()
	switch {
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && [8]byte(b[4:12]) == [8]byte{}:
		return netip.AddrFrom4([4]byte(b[12:16]))
	case [8]byte(b[0:8]) == [8]byte{} && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0:
		return netip.AddrFrom4([4]byte(b[12:16]))
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6]))
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00:
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	}
	return addr
}
