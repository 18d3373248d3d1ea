package ginmw_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/ginmw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// TestGinPostFormReadsWhatTheLimitCounts is the gin form of the decoy attack: the
// handler checks c.PostForm("username") (the body), while the account limit used
// to count a ?username= decoy from the query, so 50 guesses at alice's password
// with rotating decoys all reached the handler under a 5/min account limit. A
// decoy is now refused (400); the guesses without one spend alice's budget.
func TestGinPostFormReadsWhatTheLimitCounts(t *testing.T) {
	gin.SetMode(gin.TestMode)
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	r := gin.New()
	reached := 0
	r.POST("/login", ginmw.Middleware(store, httplimit.Limit(account, keyfuncs.FormUsername("username"))), func(c *gin.Context) {
		if _, err := keyfuncs.NormalizeUsername(c.PostForm("username")); err != nil {
			c.Status(http.StatusBadRequest)
			return
		}
		reached++
		c.Status(http.StatusUnauthorized)
	})
	for i := range 50 {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		_ = w.WriteField("username", "alice")
		_ = w.WriteField("password", fmt.Sprint("guess", i))
		_ = w.Close()
		target, want := "/login", []int{http.StatusUnauthorized, http.StatusTooManyRequests}
		if i%2 == 0 {
			target, want = fmt.Sprintf("/login?username=decoy%d", i), []int{http.StatusBadRequest}
		}
		req := httptest.NewRequest(http.MethodPost, target, &body)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1000", i)
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if !slices.Contains(want, rec.Code) {
			t.Fatalf("guess %d (%s): %d, want one of %v", i, target, rec.Code, want)
		}
	}
	t.Logf("50 guesses at alice, every other one with a decoy: %d reached the gin handler", reached)
	if reached != 5 {
		t.Fatalf("%d of 50 guesses reached the handler under a 5/min account limit", reached)
	}
}

// TestGinShouldBindReadsWhatTheLimitCounts: gin's c.ShouldBind reads a POST form
// from r.Form, the body or else the URL query. A name sent only in the query used
// to fall back to the client's address, so guesses from many addresses all
// reached the handler for one account; it is now refused.
func TestGinShouldBindReadsWhatTheLimitCounts(t *testing.T) {
	gin.SetMode(gin.TestMode)
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(3))
	r := gin.New()
	checked := 0
	limit := ginmw.Middleware(store, httplimit.Limit(account, keyfuncs.FormUsername("username")),
		httplimit.WithKeyFallback(httplimit.ClientIPFallback(nil))) // as a deployment keys a request without a name
	r.POST("/login", limit, func(c *gin.Context) {
		var in struct {
			Username string `form:"username"`
			Password string `form:"password"`
		}
		if err := c.ShouldBind(&in); err != nil {
			c.Status(http.StatusBadRequest)
			return
		}
		if in.Username == "victim" {
			checked++
		}
		c.Status(http.StatusUnauthorized)
	})
	for i := range 10 {
		for _, target := range []string{"/login?username=victim", "/login"} {
			body := "password=guess"
			if target == "/login" {
				body += "&username=victim"
			}
			req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", i+1)
			r.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	if checked != 3 {
		t.Fatalf("the handler checked %d passwords of \"victim\" from 10 addresses under 3/min", checked)
	}
}

// TestGinRequestContextKeepsNoLaterValues: gin reuses its *gin.Context, so a
// request context that read c.Set values live answered, once the request was over,
// with the next request's values, and a goroutine reading it raced gin's reset.
// The values reach the key functions only while the limiter decides.
func TestGinRequestContextKeepsNoLaterValues(t *testing.T) {
	gin.SetMode(gin.TestMode)
	var kept context.Context
	done := make(chan struct{})
	r := gin.New()
	r.Use(func(c *gin.Context) { c.Set("user", c.GetHeader("X-User")) })
	r.Use(ginmw.Middleware(memory.MustNew(), httplimit.Limit(core.MustPolicy("user", core.TokenBucket, core.PerMinute(1<<20)), keyfuncs.Tenant("user"))))
	r.GET("/r", func(c *gin.Context) {
		if kept == nil {
			kept = c.Request.Context()
			go func() { // work that outlives its request
				defer close(done)
				for range 2000 {
					_ = kept.Value("user")
				}
			}()
		}
	})
	for i := range 200 {
		req := httptest.NewRequest(http.MethodGet, "/r", nil)
		req.Header.Set("X-User", fmt.Sprint("user", i))
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d", i, rec.Code)
		}
	}
	<-done
	if v := kept.Value("user"); v != nil {
		t.Fatalf("the first request's context, after it ended, says user=%v", v)
	}
}

// TestGinShouldBindOfAnotherEncodingIsRefused: gin's c.ShouldBind picks its decoder
// from the Content-Type, so a handler binding `form:"username"` also acts on a JSON
// or XML body, where FormUsername finds no form field. Charged to its address
// (ClientIPFallback), each of 40 guesses from 8 addresses reached the password
// check under a 5/min account limit. A login stack that refuses a request without
// its field (RefuseFallback, as the examples wire it) answers them 400 before the
// handler.
func TestGinShouldBindOfAnotherEncodingIsRefused(t *testing.T) {
	gin.SetMode(gin.TestMode)
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	loginIP := core.MustPolicy("login-ip", core.FixedWindow, core.PerMinute(20))
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	r := gin.New()
	checked := 0
	r.POST("/login", ginmw.Middleware(store, httplimit.Stack(
		httplimit.Limit(account, keyfuncs.FormUsername("username")),
		httplimit.Limit(loginIP, ip.Key),
	), httplimit.WithKeyFallback(httplimit.RefuseFallback())), func(c *gin.Context) {
		var in struct {
			Username string `form:"username" json:"username" xml:"username"`
			Password string `form:"password" json:"password" xml:"password"`
		}
		if err := c.ShouldBind(&in); err != nil {
			c.Status(http.StatusBadRequest)
			return
		}
		if name, _ := keyfuncs.NormalizeUsername(in.Username); name == "victim" {
			checked++
		}
		c.Status(http.StatusUnauthorized)
	})
	for _, body := range []struct{ contentType, format string }{
		{"application/json", `{"username":"victim","password":"guess%d"}`},
		{"application/xml", `<login><username>victim</username><password>guess%d</password></login>`},
	} {
		codes := map[int]int{}
		for i := range 40 {
			req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(fmt.Sprintf(body.format, i)))
			req.Header.Set("Content-Type", body.contentType)
			req.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", i/5+1)
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			codes[w.Code]++
		}
		if checked != 0 || codes[http.StatusBadRequest] != 40 {
			t.Fatalf("%s: %d guesses at victim reached the handler, answers %v; want every one refused 400", body.contentType, checked, codes)
		}
	}
}
