package main

import (
	"log/slog"
	"net/netip"
)

// warnOfTrustInEveryAddress logs a warning for each trusted proxy prefix that holds
// every address of its family (0.0.0.0/0, ::/0). Behind such a prefix every client is
// a trusted proxy: it names its own address in the forwarding header, and so chooses
// its own IP bucket, a fresh one per request. It is right only when nothing but your
// proxies can reach the server, so the server says so once, at start, and goes on.
func warnOfTrustInEveryAddress(prefixes []netip.Prefix, logger *slog.Logger) {
	for _, p := range prefixes {
		if p.Bits() == 0 {
			logger.Warn("-trusted-proxies trusts every address: any client that reaches the server directly can set its own address, and so its own IP limit, in the forwarding header; list only your proxies' networks unless nothing else can reach the server",
				"prefix", p.String())
		}
	}
}
