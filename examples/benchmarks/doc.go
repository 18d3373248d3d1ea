// Package benchmarks compares github.com/go-ratelimit/ratelimit with the other Go rate
// limiters, in memory, on Redis and as net/http middleware. It is a module of its own
// so that the libraries it compares against never enter the main module's go.mod.
//
// The interleaved comparison, with medians, as a markdown table (README.md):
//
//	cd examples/benchmarks && go run ./cmd/compare
//
// The same scenarios as ordinary benchmarks, for benchstat:
//
//	go test -run '^$' -bench Compare/memory -count 10
//
// Package limiters wraps every implementation behind one shape, package harness holds
// the scenarios and the over-grant check. BenchmarkRedis (redisbench_test.go) compares
// the Redis store with redis_rate on stacks of limits and counts the commands each
// decision sends.
package benchmarks
