package limiters

import (
	"fmt"
	"net/http"
	"time"

	"github.com/didip/tollbooth/v7"
	tollboothlimiter "github.com/didip/tollbooth/v7/limiter"
	"github.com/go-chi/httprate"
	golimiterhttp "github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// Middleware is one net/http rate-limiting middleware, keyed by the client address.
type Middleware struct {
	// Name says which library.
	Name string
	// Ours marks this library's middleware.
	Ours bool
	// Wrap returns next behind the middleware under policy p, and a function that
	// releases what it holds.
	Wrap func(p Policy, next http.Handler) (http.Handler, func(), error)
}

// Middlewares returns the net/http middlewares under comparison, this library's first.
// "bare" is no middleware at all: the baseline every overhead is measured against.
func Middlewares() []Middleware {
	return []Middleware{
		{Name: "bare", Wrap: func(_ Policy, next http.Handler) (http.Handler, func(), error) { return next, func() {}, nil }},
		{Name: "ratelimit/nethttp (token_bucket, IETF fields)", Ours: true, Wrap: ratelimitHTTP},
		{Name: "go-limiter/httplimit", Wrap: goLimiterHTTP},
		{Name: "httprate", Wrap: httprateHTTP},
		{Name: "tollbooth", Wrap: tollboothHTTP},
	}
}

func ratelimitHTTP(p Policy, next http.Handler) (http.Handler, func(), error) {
	policy, err := ratelimitPolicy(core.TokenBucket, p)
	if err != nil {
		return nil, nil, err
	}
	store, err := memory.New()
	if err != nil {
		return nil, nil, err
	}
	clientIP, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{})
	if err != nil {
		return nil, nil, err
	}
	mw, err := nethttp.New(store, httplimit.Limit(policy, clientIP.Key), httplimit.WithFields(httplimit.IETFFields))
	if err != nil {
		return nil, nil, err
	}
	return mw(next), func() { _ = store.Close() }, nil
}

func goLimiterHTTP(p Policy, next http.Handler) (http.Handler, func(), error) {
	store, err := memorystore.New(&memorystore.Config{Tokens: uint64(p.Rate), Interval: Period})
	if err != nil {
		return nil, nil, fmt.Errorf("go-limiter: %w", err)
	}
	mw, err := golimiterhttp.NewMiddleware(store, golimiterhttp.IPKeyFunc())
	if err != nil {
		return nil, nil, fmt.Errorf("go-limiter: %w", err)
	}
	return mw.Handle(next), func() {}, nil
}

func httprateHTTP(p Policy, next http.Handler) (http.Handler, func(), error) {
	return httprate.Limit(int(p.Rate), Period, httprate.WithKeyFuncs(httprate.KeyByIP))(next), func() {}, nil
}

func tollboothHTTP(p Policy, next http.Handler) (http.Handler, func(), error) {
	lmt := tollbooth.NewLimiter(float64(p.Rate)/Period.Seconds(), &tollboothlimiter.ExpirableOptions{DefaultExpirationTTL: time.Hour})
	lmt.SetBurst(int(p.Burst))
	lmt.SetIPLookups([]string{"RemoteAddr"})
	return tollbooth.LimitHandler(lmt, next), func() {}, nil
}
