// Package keyfuncs turns an HTTP request into the key a rate limit counts it
// under: who is asking (a user, an API key, a tenant, a client IP or its
// network) or what is asked for (a route, a form, JSON or query field).
//
// A key is only as strong as the identity behind it, so the key functions take
// identities a client cannot mint:
//
//   - API keys count only once the application accepts them: ValidAPIKey takes
//     a validator, AuthenticatedAPIKey reads what authentication stored in the
//     request context. An unknown key gets ErrUnknownAPIKey (an ErrNoKey), so
//     FirstOf falls through to the client's address.
//   - Form and JSON fields are read exactly as the handler reads them: FormField
//     is r.PostFormValue for POST, PUT and PATCH (the body only, parsed by
//     net/http with its limits), JSONField matches members as json.Unmarshal
//     does. A body that cannot be parsed is an error, never a missing key.
//   - Usernames are case-folded and normalised with PRECIS UsernameCaseMapped
//     (FormUsername, JSONUsername, NormalizeUsername), so "Alice" and "ALICE",
//     "straße" and "STRASSE" are one account.
//   - Client addresses come from ClientIP, which believes the one forwarding
//     header that trusted proxies set (ClientIPConfig.Header: X-Forwarded-For
//     by default, RFC 7239 Forwarded, or X-Real-IP), only on connections from
//     those proxies, and only as far as they wrote it. By default nothing is
//     trusted and the TCP peer is the client.
//
// Every KeyFunc returns a non-empty key of at most core.MaxKeyLength bytes,
// prefixed by its kind ("user:alice", "ak:9f86d081884c7d65…", "ip:203.0.113.9",
// "ip6:2001:db8:1:2::/64", "net4:203.0.113.0/24", "field:username:alice"), or an
// error. ErrNoKey (possibly wrapped) means the request lacks that identity, so
// that FirstOf can try the next function and a limiter can fall back as
// configured; other errors must not be skipped. User-controlled values that are
// long, hold control characters or could confuse Join are replaced by a hash
// ("h:" prefix), and API keys are always hashed, so a raw secret never reaches
// a store or a log.
//
//	ip, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{
//		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
//		Header:         keyfuncs.XForwardedFor, // the one header your proxies set
//	})
//	if err != nil {
//		return err
//	}
//	// A key the application accepts, else the client's address (IPv6 grouped
//	// by /64): invented keys share the address's bucket.
//	key := keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", keyfuncs.APIKeySet(keys...)), ip.Key)
//	// Login attempts: per account (from the body, normalised), and per network.
//	account := keyfuncs.FormUsername("username")
//	subnet, err := ip.Subnet(24, 56)
//
// Prefer identity keys (user, API key, tenant) after authentication: many
// clients can share one address behind a NAT. Before authentication, key by
// address, and add a subnet policy against clients that rotate addresses.
package keyfuncs
