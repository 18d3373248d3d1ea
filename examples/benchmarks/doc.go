// Package benchmarks compares the Redis store of github.com/go-ratelimit/ratelimit with
// other Redis rate limiters on one redis-server, in one run. It is a module of its own
// so that the libraries it compares against never enter the main module's go.mod.
//
//	cd examples/benchmarks && go test -run '^$' -bench . -benchtime 3s
//
// Each scenario (redisbench_test.go) runs against every peer (peers_test.go); a new
// library is one more peer, a new workload one more scenario. Every benchmark reports
// decisions/s, allocs/op and the Redis commands each decision sent (cmds/decision).
package benchmarks
