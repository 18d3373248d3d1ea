package httpengine_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// TestUnreadableBodiesAreRefusedNotChargedElsewhere: a login whose body cannot
// be parsed (400) or is over a size limit (413) is answered as a client error.
// It takes no fallback, so it is charged to no other name: neither the address
// by a fallback nor the stack's other policy.
func TestUnreadableBodiesAreRefusedNotChargedElsewhere(t *testing.T) {
	account := core.MustPolicy("account", core.FixedWindow, core.PerMinute(1))
	perIP := core.MustPolicy("ip", core.FixedWindow, core.PerMinute(1))
	const form = "application/x-www-form-urlencoded"
	cases := []struct {
		name        string
		key         keyfuncs.KeyFunc
		contentType string
		body        string
		maxBytes    int64 // an http.MaxBytesReader's limit; 0: none
		status      int
		wantErr     error
	}{
		{"malformed form", keyfuncs.FormField("username"), form, "username=%zz&password=x", 0, http.StatusBadRequest, keyfuncs.ErrBadForm},
		{"broken multipart", keyfuncs.FormField("username"), "multipart/form-data; boundary=x", "--x\r\nbroken", 0, http.StatusBadRequest, keyfuncs.ErrBadForm},
		{"form over MaxBytesReader", keyfuncs.FormField("username"), form, "username=alice&password=" + strings.Repeat("x", 100), 32, http.StatusRequestEntityTooLarge, keyfuncs.ErrFormTooLarge},
		{"JSON over MaxJSONBytes", keyfuncs.JSONField("username"), "application/json", `{"username":"alice","pad":"` + strings.Repeat("x", keyfuncs.MaxJSONBytes) + `"}`, 0, http.StatusRequestEntityTooLarge, keyfuncs.ErrFormTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			obs := &fallbackRecorder{}
			l := httpengine.Must(store, httpengine.Stack(
				httpengine.Limit(account, tc.key),
				httpengine.Limit(perIP, func(r *http.Request) (string, error) { return "ip:192.0.2.1", nil }),
			), httpengine.WithObserver(obs), httpengine.WithLogger(slog.New(slog.DiscardHandler)))
			post := func(contentType, body string, maxBytes int64) *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
				r.RemoteAddr = "192.0.2.1:1"
				r.Header.Set("Content-Type", contentType)
				if maxBytes > 0 {
					r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, maxBytes)
				}
				return serve(l, r, ok)
			}
			for i := range 3 {
				w := post(tc.contentType, tc.body, tc.maxBytes)
				if w.Code != tc.status || w.Header().Get("Content-Type") != httpengine.ProblemContentType {
					t.Fatalf("request %d: %d %q, want %d with a problem body", i, w.Code, w.Header().Get("Content-Type"), tc.status)
				}
			}
			if len(obs.errs) != 3 || !errors.Is(obs.errs[0], tc.wantErr) || !errors.Is(obs.errs[0], httpengine.ErrUnidentified) {
				t.Fatalf("errors %v, want three wrapping %v and ErrUnidentified", obs.errs, tc.wantErr)
			}
			if len(obs.fallbacks) != 0 || len(obs.keys) != 0 {
				t.Fatalf("an unreadable body fell back (%v) or was decided (%v)", obs.fallbacks, obs.keys)
			}
			// Neither alice's bucket nor the address's was spent.
			body, contentType := "username=alice&password=x", form
			if tc.contentType == "application/json" {
				body, contentType = `{"username":"alice"}`, "application/json"
			}
			if w := post(contentType, body, 0); w.Code != http.StatusOK {
				t.Fatalf("a readable login after the unreadable ones: %d, want 200", w.Code)
			}
		})
	}
}
