package nethttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// discardWriter is a ResponseWriter that keeps nothing, so that benchmarks
// measure the middleware rather than a recorder.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

func noop(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// manyKeys is how many client addresses each goroutine of a many-keys run rotates through.
const manyKeys = 4096

// benchRouter measures one request through h per iteration: from one client
// address shared by every goroutine (keys == 1: one hot key), or rotating over
// keys addresses of each goroutine's own.
func benchRouter(b *testing.B, h http.Handler, keys int) {
	b.Helper()
	sets := make([][]*http.Request, runtime.GOMAXPROCS(0))
	for id := range sets {
		sets[id] = make([]*http.Request, keys)
		for i := range keys {
			r := httptest.NewRequest(http.MethodGet, "/api/resource", nil)
			r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:4000", id, i>>8&0xff, i&0xff)
			if keys == 1 {
				r.RemoteAddr = "10.0.0.1:4000"
			}
			sets[id][i] = r
		}
	}
	var worker atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		reqs := sets[int(worker.Add(1)-1)%len(sets)]
		w := &discardWriter{header: make(http.Header, 4)}
		for i := 0; pb.Next(); i++ {
			clear(w.header)
			h.ServeHTTP(w, reqs[i%keys])
		}
	})
}

// BenchmarkMiddleware compares a ServeMux route with and without the rate
// limiter (a token bucket that admits everything, on the memory store).
func BenchmarkMiddleware(b *testing.B) {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(1_000_000_000))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	newMux := func(mw func(http.Handler) http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /api/resource", mw(http.HandlerFunc(noop)))
		return mux
	}
	b.Run("bare", func(b *testing.B) {
		benchRouter(b, newMux(func(h http.Handler) http.Handler { return h }), 1)
	})
	for _, keys := range []int{1, manyKeys} {
		b.Run(fmt.Sprintf("limited/keys=%d", keys), func(b *testing.B) {
			store := memory.MustNew()
			defer store.Close()
			benchRouter(b, newMux(nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key))), keys)
			checkKeys(b, store, keys)
		})
	}
	// A flood from one key that is refused: the 429 path, with its problem body.
	b.Run("refused/keys=1", func(b *testing.B) {
		store := memory.MustNew()
		defer store.Close()
		one := core.MustPolicy("api", core.FixedWindow, core.PerHour(1))
		benchRouter(b, newMux(nethttp.Middleware(store, httplimit.Limit(one, clientIP.Key))), 1)
	})
}

// checkKeys fails a benchmark whose requests did not use the keys it meant to.
func checkKeys(b *testing.B, store *memory.Store, keys int) {
	b.Helper()
	got := store.Stats().Keys
	if keys == 1 && got != 1 || keys > 1 && got < min(keys, b.N) {
		b.Fatalf("the store holds %d keys after %d requests; the benchmark meant %d", got, b.N, keys)
	}
}
