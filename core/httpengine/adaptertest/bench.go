package adaptertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// discardWriter is a ResponseWriter that keeps nothing, so that benchmarks
// measure the middleware rather than a recorder.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// manyKeys is how many client addresses each goroutine of a many-keys run rotates through.
const manyKeys = 4096

// BenchMiddleware measures an adapter's overhead per request: bare serves GET /x
// on the adapter's router without the middleware, mount with it. It runs one hot
// key, manyKeys keys per goroutine (asserting the store really held them) and a
// flood that is refused (the 429 path with its problem body), on the memory store
// with a token bucket that admits everything.
func BenchMiddleware(b *testing.B, bare http.Handler, mount Mount) {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(1_000_000_000))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	b.Run("bare", func(b *testing.B) { benchRouter(b, bare, 1) })
	for _, keys := range []int{1, manyKeys} {
		b.Run(fmt.Sprintf("limited/keys=%d", keys), func(b *testing.B) {
			store := memory.MustNew()
			defer store.Close()
			benchRouter(b, mount(store, httpengine.Limit(api, clientIP.Key)), keys)
			if got := store.Stats().Keys; keys == 1 && got != 1 || keys > 1 && got < min(keys, b.N) {
				b.Fatalf("the store holds %d keys after %d requests; the benchmark meant %d", got, b.N, keys)
			}
		})
	}
	b.Run("refused/keys=1", func(b *testing.B) {
		store := memory.MustNew()
		defer store.Close()
		one := core.MustPolicy("api", core.FixedWindow, core.PerHour(1))
		benchRouter(b, mount(store, httpengine.Limit(one, clientIP.Key)), 1)
	})
}

// benchRouter measures one request through h per iteration: from one client
// address shared by every goroutine (keys == 1: one hot key), or rotating over
// keys addresses of each goroutine's own.
func benchRouter(b *testing.B, h http.Handler, keys int) {
	b.Helper()
	sets := make([][]*http.Request, runtime.GOMAXPROCS(0))
	for id := range sets {
		sets[id] = make([]*http.Request, keys)
		for i := range keys {
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
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
