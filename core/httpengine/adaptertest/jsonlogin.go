package adaptertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// Login serves POST /login on the adapter's real router, with the adapter's
// middleware built from store and limits on that route, in front of handler.
type Login func(store core.Store, limits httpengine.Limits, handler http.HandlerFunc) http.Handler

// RunJSONLoginDecoys attacks a JSON login limited by account (keyfuncs.JSONUsername)
// and client IP, from a new address per attempt, with bodies whose account the
// handler reads but a careless key function would not: a later null or differently
// cased duplicate, and JSON sent under another content type. The handler decodes as
// handlers do, with a json.Decoder into a string field; it must see alice at most
// the account's limit of 5 times.
func RunJSONLoginDecoys(t *testing.T, build Login) {
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	perIP := core.MustPolicy("ip", core.FixedWindow, core.PerMinute(20))
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	attempts := 0
	h := build(newStore(t), httpengine.Stack(
		httpengine.Limit(account, keyfuncs.JSONUsername("username")),
		httpengine.Limit(perIP, ip.Key),
	), func(w http.ResponseWriter, r *http.Request) {
		var login struct{ Username string }
		if err := jsonDecode(r, &login); err == nil && login.Username == "alice" {
			attempts++
		}
	})
	decoys := []struct{ contentType, body string }{
		{"application/json", `{"username":"alice","password":"guess","username":null}`},
		{"application/json", `{"username":"alice","password":"guess","USERNAME":null}`},
		{"text/plain", `{"username":"alice","password":"guess"}`},
		{"", `{"username":"alice","password":"guess"}`},
	}
	for i := range 40 {
		d := decoys[i%len(decoys)]
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(d.body))
		r.RemoteAddr = fmt.Sprintf("198.51.%d.7:4000", i) // a /24 of its own: the address never limits
		if d.contentType != "" {
			r.Header.Set("Content-Type", d.contentType)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if attempts != 5 {
		t.Fatalf("the handler checked alice's password %d times from 40 addresses; the account allows 5", attempts)
	}
}

// jsonDecode decodes r's body as handlers commonly do, whatever its content type.
func jsonDecode(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }
