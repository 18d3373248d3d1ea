// Command server is the reference server: every feature of the rate limiter on one
// small API, on the router of your choice.
//
//	go run ./examples/server -router chi -algorithm token_bucket -limit 10 -period 1s -burst 20
//
// Routes:
//
//	GET  /healthz            never limited
//	GET  /api/resource       policy "api", keyed by the hashed X-API-Key, else the client IP; cost 1
//	GET  /api/report         the same "api" bucket, cost 5
//	GET  /api/export?ms=N    at most 2 in flight per client; works N ms (at most 5000)
//	POST /login              stack: account (username) 5/min, client IP 20/min, subnet 100/min
//	GET  /metrics            Prometheus: ratelimit_decisions_total{policy,result}
//
// Flags: -addr, -router nethttp|chi|gin|echo, -store memory|redis|embedded,
// -redis-addrs, -algorithm, -limit, -period, -burst, -on-store-error
// open|closed|local, -trusted-proxies CIDR[,CIDR]. Each decision is logged with
// slog; SIGINT or SIGTERM shuts the server down gracefully.
package main
