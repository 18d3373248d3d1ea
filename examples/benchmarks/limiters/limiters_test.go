package limiters_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/examples/benchmarks/limiters"
)

var servers redistest.Shared

func TestMain(m *testing.M) { os.Exit(servers.Run(m)) }

// burstOf checks that an implementation built for limiters.Tight admits its burst
// (or window limit) of 100 on a fresh key at once, and refuses the next: the wrappers
// give every library the same policy.
func burstOf(t *testing.T, env limiters.Env, impl limiters.Impl) {
	l, err := impl.New(env, limiters.Tight)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	decide := l.Worker()
	admitted := 0
	for range limiters.Tight.Burst + 1 {
		ok, err := decide(context.Background(), "burst")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			admitted++
		}
	}
	// A decision may straddle a refill or a window edge; one more is the most that may
	// come of it in the few microseconds this takes.
	if admitted < int(limiters.Tight.Burst) || admitted > int(limiters.Tight.Burst)+1 {
		t.Errorf("%s admitted %d of %d at once, want %d", impl.Name, admitted, limiters.Tight.Burst+1, limiters.Tight.Burst)
	}
}

func TestMemoryImplementationsShareThePolicy(t *testing.T) {
	for _, impl := range limiters.Memory() {
		t.Run(impl.Name, func(t *testing.T) { burstOf(t, limiters.Env{}, impl) })
	}
}

func TestRedisImplementationsShareThePolicy(t *testing.T) {
	addr := servers.Server(t).Addr
	for i, impl := range limiters.Redis() {
		if impl.Algorithm == "none" { // references that admit everything; the straight-line fixed window decides
			continue
		}
		t.Run(impl.Name, func(t *testing.T) {
			burstOf(t, limiters.Env{RedisAddr: addr, PoolSize: 4, Prefix: fmt.Sprintf("policy-%d-%d:", time.Now().UnixNano(), i)}, impl)
		})
	}
}

func TestMiddlewaresAdmitAndOursWritesTheIETFFields(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, mw := range limiters.Middlewares() {
		t.Run(mw.Name, func(t *testing.T) {
			h, release, err := mw.Wrap(limiters.Throughput, next)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			w := limiters.NewResponseWriter()
			r, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
			r.RemoteAddr = "203.0.113.9:4242"
			h.ServeHTTP(w, r)
			if w.Status() != http.StatusNoContent {
				t.Fatalf("status %d, want the handler's 204", w.Status())
			}
			if mw.Ours && (w.Header().Get("RateLimit-Policy") == "" || w.Header().Get("RateLimit") == "") {
				t.Errorf("fields %v, want RateLimit-Policy and RateLimit", w.Header())
			}
		})
	}
}
