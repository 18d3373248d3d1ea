package ginmw_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gin-gonic/gin"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/ginmw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

func ExampleMiddleware() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(2))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // not c.ClientIP()

	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/hello", ginmw.Middleware(store, httplimit.Limit(api, clientIP.Key)), func(c *gin.Context) {
		c.String(http.StatusOK, "hello")
	})
	for range 3 {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/hello", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 "api";r=1;t=60
	// 200 "api";r=0;t=60
	// 429 "api";r=0;t=60
}
