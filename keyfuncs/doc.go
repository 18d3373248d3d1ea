// Package keyfuncs turns an HTTP request into the key a rate limit counts it
// under: who is asking (a user, an API key, a tenant, a client IP or its
// network) or what is asked for (a route, a form or query field).
//
// Every KeyFunc returns a non-empty key of at most core.MaxKeyLength bytes,
// prefixed by its kind ("user:alice", "ak:9f86d081884c7d65…", "ip:203.0.113.9",
// "ip6:2001:db8:1:2::/64", "net4:203.0.113.0/24", "form:username:alice"), or an
// error. ErrNoKey (possibly wrapped) means the request lacks that identity, so
// that FirstOf can try the next function; other errors must not be skipped.
// User-controlled values that are long, hold control characters or could
// confuse Join are replaced by a hash ("h:" prefix), and API keys are always
// hashed, so a raw secret never reaches a store or a log.
//
// Client addresses come from ClientIP, which believes forwarding headers
// (X-Forwarded-For, RFC 7239 Forwarded, X-Real-IP) only on connections from
// trusted proxies, and only as far as those proxies wrote them. By default
// nothing is trusted and the TCP peer is the client.
//
//	ip, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{
//		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
//	})
//	if err != nil {
//		return err
//	}
//	// The API key when the client sends one, else its address
//	// (IPv6 grouped by /64).
//	key := keyfuncs.FirstOf(keyfuncs.APIKey("X-API-Key"), ip.Key)
//	// Login attempts: per account, and per client network.
//	account := keyfuncs.FormFieldWith("username", strings.ToLower)
//	subnet, err := ip.Subnet(24, 56)
//
// Prefer identity keys (user, API key, tenant) after authentication: many
// clients can share one address behind a NAT. Before authentication, key by
// address, and add a subnet policy against clients that rotate addresses.
package keyfuncs
