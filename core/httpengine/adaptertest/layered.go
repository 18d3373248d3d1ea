package adaptertest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// CheckLayeredExample checks the layered program of the router examples and of
// docs/composition.md, served by h on a store whose clock stands still:
//
//   - app-wide: policy "api", a token bucket of 10 per second with bursts of 20
//     per client address, where GET /report costs 5 (a route-to-cost table) and
//     every other route 1;
//   - POST /login: a stack nested under it, "account" (the form's username, 5 per
//     minute, sliding log) and "login-ip" (20 per minute, fixed window), which
//     refuses a login without its username form field (RefuseFallback).
//
// A login is one decision over the three policies, listed once each. Once the
// account is spent, the same name sent in a JSON body (which gin's c.ShouldBind
// decodes) or under another spelling of the field (which echo's c.Bind accepts) is
// answered 400, never passed to the handler outside the account's budget.
func CheckLayeredExample(t *testing.T, h http.Handler) {
	t.Helper()
	type want struct {
		code              int
		rateLimit, policy string
	}
	const policies = `"api";q=20;w=2, "account";q=5;w=60, "login-ip";q=20;w=60`
	login := func(contentType, body string, wantCode int) {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != wantCode {
			t.Fatalf("POST /login, %s %s: %d, want %d", contentType, body, rec.Code, wantCode)
		}
	}
	send := func(method, path string, w want) {
		t.Helper()
		var r *http.Request
		if method == http.MethodPost {
			r = httptest.NewRequest(method, path, strings.NewReader(url.Values{"username": {"alice"}, "password": {"x"}}.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			r = httptest.NewRequest(method, path, nil)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != w.code || rec.Header().Get("RateLimit") != w.rateLimit || (w.policy != "" && rec.Header().Get("RateLimit-Policy") != w.policy) {
			t.Fatalf("%s %s: %d\n RateLimit %q\n RateLimit-Policy %q\nwant %d\n RateLimit %q\n RateLimit-Policy %q",
				method, path, rec.Code, rec.Header().Get("RateLimit"), rec.Header().Get("RateLimit-Policy"), w.code, w.rateLimit, w.policy)
		}
	}
	send(http.MethodPost, "/login", want{200, `"api";r=19;t=1, "account";r=4;t=60, "login-ip";r=19;t=60`, policies})
	send(http.MethodGet, "/report", want{200, `"api";r=14;t=1`, `"api";q=20;w=2`})
	send(http.MethodGet, "/items/1", want{200, `"api";r=13;t=1`, `"api";q=20;w=2`})
	for i := 3; i >= 0; i-- {
		send(http.MethodPost, "/login", want{code: 200, rateLimit: loginFields(9+i, i, 15+i)})
	}
	// The account is spent: the stack refuses, and "api" and "login-ip" are not charged.
	send(http.MethodPost, "/login", want{429, `"api";r=9;t=2, "account";r=0;t=60, "login-ip";r=15;t=60`, policies})
	login("application/json", `{"username":"alice","password":"x"}`, http.StatusBadRequest)
	login("application/x-www-form-urlencoded", "USERNAME=alice&password=x", http.StatusBadRequest)
	// Each of the two spent one of "api", as any request the server answers does.
	send(http.MethodGet, "/items/1", want{200, `"api";r=6;t=2`, `"api";q=20;w=2`})
}

// loginFields is the RateLimit field of an admitted login.
func loginFields(api, account, ip int) string {
	return `"api";r=` + strconv.Itoa(api) + ";t=" + strconv.Itoa((20-api+9)/10) + `, "account";r=` + strconv.Itoa(account) +
		`;t=60, "login-ip";r=` + strconv.Itoa(ip) + ";t=60"
}
