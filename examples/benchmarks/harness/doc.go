// Package harness runs the scenarios of the comparison against every implementation of
// package limiters: memory (serial, one hot key in parallel, 100k keys in parallel),
// Redis (one hot key and per-user keys, 64 goroutines) and HTTP middleware overhead,
// plus an over-grant check. The same Run functions serve the interleaved runner
// (cmd/compare, through testing.Benchmark) and `go test -bench` (BenchmarkCompare).
//
//	res := testing.Benchmark(func(b *testing.B) { stats = harness.Run(b, sc, limiter) })
//	fmt.Println(float64(res.T.Nanoseconds())/float64(res.N), "ns/decision")
package harness
