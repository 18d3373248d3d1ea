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

// TestEchoBindReadsNoOtherSpellingOfTheField: echo's c.Bind matches a form field's
// name regardless of case when the exact name is missing, so a handler binding
// `form:"username"` acts on "USERNAME=victim". The account limit used to find no
// "username" and charge each guess to its address (ClientIPFallback): 40 guesses
// from 8 addresses all reached the password check under a 5/min account limit.
// Another spelling of the name is now refused (400) before the handler.
func TestEchoBindReadsNoOtherSpellingOfTheField(t *testing.T) {
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	loginIP := core.MustPolicy("login-ip", core.FixedWindow, core.PerMinute(20))
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	e := echo.New()
	checked := 0
	e.POST("/login", func(c echo.Context) error {
		var in struct {
			Username string `form:"username"`
			Password string `form:"password"`
		}
		if err := c.Bind(&in); err != nil {
			return err
		}
		if name, _ := keyfuncs.NormalizeUsername(in.Username); name == "victim" {
			checked++
		}
		return c.NoContent(http.StatusUnauthorized)
	}, echomw.Middleware(store, httplimit.Stack(
		httplimit.Limit(account, keyfuncs.FormUsername("username")),
		httplimit.Limit(loginIP, ip.Key),
	), httplimit.WithKeyFallback(httplimit.ClientIPFallback(ip.Key))))
	codes := map[int]int{}
	for i := range 40 {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(fmt.Sprint("USERNAME=victim&password=guess", i)))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", i/5+1)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		codes[w.Code]++
	}
	if checked != 0 || codes[http.StatusBadRequest] != 40 {
		t.Fatalf("%d guesses at victim reached the handler, answers %v; want every one refused 400", checked, codes)
	}
}
