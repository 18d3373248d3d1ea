package ginmw_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
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
// with rotating decoys all reached the handler under a 5/min account limit.
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
		req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/login?username=decoy%d", i), &body)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1000", i)
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized && rec.Code != http.StatusTooManyRequests {
			t.Fatalf("guess %d: %d", i, rec.Code)
		}
	}
	t.Logf("50 guesses at alice with rotating decoys: %d reached the gin handler", reached)
	if reached != 5 {
		t.Fatalf("%d of 50 guesses reached the handler under a 5/min account limit", reached)
	}
}
