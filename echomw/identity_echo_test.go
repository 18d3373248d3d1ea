package echomw_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/echomw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// TestEchoFormValueReadsWhatTheLimitCounts: echo's c.FormValue reads r.Form, the
// body or else the URL query, and for a multipart body the query first. A name
// in the query only, or in the query beside a decoy in the body, used to let
// every guess at one account from a new address reach the handler; both are now
// refused before it, and the account's budget holds.
func TestEchoFormValueReadsWhatTheLimitCounts(t *testing.T) {
	for name, request := range map[string]func(i int) *http.Request{
		"name in the query only": func(i int) *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/login?username=victim", strings.NewReader(fmt.Sprint("password=guess", i)))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		},
		"multipart decoy, name in the query": func(i int) *http.Request {
			var body bytes.Buffer
			w := multipart.NewWriter(&body)
			_ = w.WriteField("username", fmt.Sprint("decoy", i))
			_ = w.WriteField("password", "guess")
			_ = w.Close()
			r := httptest.NewRequest(http.MethodPost, "/login?username=victim", &body)
			r.Header.Set("Content-Type", w.FormDataContentType())
			return r
		},
		"name in the body": func(i int) *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(fmt.Sprint("username=victim&password=guess", i)))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		},
	} {
		t.Run(name, func(t *testing.T) {
			store := memory.MustNew(memory.WithSweepInterval(0))
			defer store.Close()
			account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(3))
			e := echo.New()
			checked := 0
			e.POST("/login", func(c echo.Context) error {
				if c.FormValue("username") == "victim" {
					checked++
				}
				return c.String(http.StatusUnauthorized, "wrong")
			}, echomw.Middleware(store, httplimit.Limit(account, keyfuncs.FormUsername("username")),
				httplimit.WithKeyFallback(httplimit.ClientIPFallback(nil)))) // as a deployment keys a request without a name
			for i := range 10 {
				r := request(i)
				r.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", i+1)
				e.ServeHTTP(httptest.NewRecorder(), r)
			}
			if checked > 3 {
				t.Fatalf("the handler checked %d passwords of \"victim\" from 10 addresses under 3/min", checked)
			}
		})
	}
}

// TestEchoRequestContextKeepsNoLaterValues: echo pools its echo.Context, so a
// request context that read c.Set values live answered, once the request was over,
// with a later request's values.
func TestEchoRequestContextKeepsNoLaterValues(t *testing.T) {
	var kept context.Context
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { c.Set("user", c.Request().Header.Get("X-User")); return next(c) }
	})
	e.Use(echomw.Middleware(memory.MustNew(), httplimit.Limit(core.MustPolicy("user", core.TokenBucket, core.PerMinute(1<<20)), keyfuncs.Tenant("user"))))
	e.GET("/r", func(c echo.Context) error {
		if kept == nil {
			kept = c.Request().Context()
		}
		return nil
	})
	for _, user := range []string{"alice", "bob"} {
		req := httptest.NewRequest(http.MethodGet, "/r", nil)
		req.Header.Set("X-User", user)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", user, rec.Code)
		}
	}
	if v := kept.Value("user"); v != nil {
		t.Fatalf("alice's request context, after it ended, says user=%v", v)
	}
}
