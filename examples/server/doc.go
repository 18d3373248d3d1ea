// Command server is the reference server: every feature of the rate limiter on one
// small API, on the router of your choice.
//
//	go run ./examples/server -router chi -algorithm token_bucket -limit 10 -period 1s -burst 20
//
// Routes:
//
//	GET  /healthz            never limited
//	GET  /api/resource       policy "api", keyed by the hashed X-API-Key when it is one of
//	                         -api-keys, else the client IP; cost 1. An unknown key gets 401,
//	                         charged to the client IP's bucket
//	GET  /api/report         the same "api" bucket, cost 5
//	GET  /api/export?ms=N    at most 2 in flight per client; works N ms (at most 5000)
//	POST /login              stack: account (the body's username, PRECIS-normalised) 5/min,
//	                         client IP 20/min, subnet 100/min; 400 for a body that is not a
//	                         form or cannot be parsed
//	GET  /metrics            Prometheus: ratelimit_decisions_total{policy,result}
//
// Each GET route also answers HEAD, limited and charged as its GET.
//
// Flags: -addr, -router nethttp|chi|gin|echo, -store memory|redis|embedded,
// -redis-addrs, -algorithm, -limit, -period, -burst, -on-store-error
// open|closed|local, -replicas N (instances sharing Redis), -trusted-proxies CIDR[,CIDR], -forwarded-header
// x-forwarded-for|forwarded|x-real-ip (the one header those proxies set),
// -api-keys k1,k2,... (default demo-key), -log-level debug|info|warn|error,
// -read-timeout, -write-timeout, -idle-timeout.
//
// Request bodies are bounded (64 KiB) and the read timeout cuts off a client that
// stalls its body. Decisions, errors and key fallbacks are logged at debug; at info
// the server logs its lifecycle, the first error of each kind in an interval (its
// kind and the request's path, at warn or error), and, once per interval, a summary
// of refusals, errors and fallbacks with counts only: no client address, key or
// username.
// SIGINT or SIGTERM shuts the server down gracefully.
package main
