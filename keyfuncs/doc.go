// Package keyfuncs turns an HTTP request into the key a rate limit counts it
// under: who is asking (a user, an API key, a tenant, a client IP or its
// network) or what is asked for (a route, a form, JSON or query field).
//
// A key is only as strong as the identity behind it, so the key functions take
// identities a client cannot mint. ClientIP believes a forwarding header only
// from TrustedProxies, and none is trusted by default: the TCP peer is the
// client. API keys are always hashed. A KeyFunc returns ErrNoKey
// (possibly wrapped) when the request lacks its identity, so that FirstOf tries
// the next function; any other error must not be skipped.
//
//	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{TrustedProxies: proxies})
//	// An API key the application accepts, else the client's address:
//	key := keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", keyfuncs.APIKeySet(keys...)), ip.Key)
//
// Safe forms of each key, fallbacks and trusted proxies: docs/identity.md.
package keyfuncs
