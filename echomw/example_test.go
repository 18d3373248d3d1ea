package echomw_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/echomw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/labstack/echo/v4"
)

func ExampleMiddleware() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(2))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // not RealIP()

	e := echo.New()
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello") },
		echomw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
	for range 3 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/hello", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 "api";r=1;t=60
	// 200 "api";r=0;t=60
	// 429 "api";r=0;t=60
}
