package benchmarks

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/harness"
	"github.com/go-ratelimit/ratelimit/examples/benchmarks/limiters"
)

// BenchmarkCompare runs the scenarios of cmd/compare as ordinary benchmarks, for
// benchstat (one implementation after another, not interleaved):
//
//	go test -run '^$' -bench Compare/memory -count 10 | tee new.txt
//
// The Redis scenarios are skipped without redis-server.
func BenchmarkCompare(b *testing.B) {
	scenarios, err := harness.Scenarios()
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range scenarios {
		b.Run(sc.Name, func(b *testing.B) {
			switch sc.Kind {
			case harness.KindHTTP:
				benchHTTP(b, sc)
			default:
				benchDecider(b, sc)
			}
		})
	}
}

func benchDecider(b *testing.B, sc harness.Scenario) {
	impls, policy := limiters.Memory(), limiters.Throughput
	var env limiters.Env
	if sc.Kind == harness.KindRedis {
		impls, policy = limiters.Redis(), limiters.RedisThroughput
		env = limiters.Env{RedisAddr: servers.Server(b).Addr, PoolSize: harness.RedisGoroutines}
	}
	for i, impl := range impls {
		b.Run(impl.Name, func(b *testing.B) {
			env.Prefix = fmt.Sprintf("cmp%d-%d:", time.Now().UnixNano(), i)
			l, err := impl.New(env, policy)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if err := harness.Warm(sc, l); err != nil {
				b.Fatal(err)
			}
			report(b, harness.RunDecider(b, sc, l))
		})
	}
}

func benchHTTP(b *testing.B, sc harness.Scenario) {
	handler := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, mw := range limiters.Middlewares() {
		b.Run(mw.Name, func(b *testing.B) {
			h, release, err := mw.Wrap(limiters.Throughput, handler)
			if err != nil {
				b.Fatal(err)
			}
			defer release()
			report(b, harness.RunHTTP(b, sc, h))
		})
	}
}

// report adds the refusals and failures of a run, which the throughput policy should
// keep at zero.
func report(b *testing.B, st harness.Stats) {
	if st.Errors > 0 {
		b.ReportMetric(float64(st.Errors)/float64(b.N), "errors/op")
		b.Logf("%d failed decisions, the first: %v", st.Errors, st.Err)
	}
	b.ReportMetric(float64(st.Refused)/float64(b.N), "refused/op")
}
