package httpengine_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

func TestNewRejectsInvalidConfiguration(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	export := core.MustConcurrencyPolicy("export", 2, time.Minute)
	tests := []struct {
		name    string
		store   core.Store
		limits  httpengine.Limits
		options []httpengine.Option
		want    string
	}{
		{"nil store", nil, httpengine.Limit(api, headerKey), nil, "nil store"},
		{"no policy", store, httpengine.Limits{}, nil, "no policy"},
		{"zero policy", store, httpengine.Limit(core.Policy{}, headerKey), nil, "zero Policy"},
		{"nil key", store, httpengine.Limit(api, nil), nil, `policy "api" has a nil key function`},
		{"duplicate name", store, httpengine.Stack(httpengine.Limit(api, headerKey), httpengine.Limit(api, headerKey)), nil, `"api": appears twice`},
		{"cost above burst", store, httpengine.Limit(api, headerKey), []httpengine.Option{httpengine.WithCost(21)}, `policy "api" admits costs from 1 to 20, got 21`},
		{"zero cost", store, httpengine.Limit(api, headerKey), []httpengine.Option{httpengine.WithCost(0)}, "cost must be at least 1"},
		{"cost and cost func", store, httpengine.Limit(api, headerKey), []httpengine.Option{httpengine.WithCost(2), httpengine.WithCostFunc(func(*http.Request) (int64, error) { return 1, nil })}, "exclusive"},
		{"settle without refunder", plainStore{store}, httpengine.Limit(api, headerKey), []httpengine.Option{httpengine.WithSettle(func(*http.Request, int, int64) int64 { return 0 })}, "does not implement core.Refunder"},
		{"settle on concurrency", store, httpengine.Limit(export, headerKey), []httpengine.Option{httpengine.WithSettle(func(*http.Request, int, int64) int64 { return 0 })}, `"export" is a concurrency policy`},
		{"unknown fields", store, httpengine.Limit(api, headerKey), []httpengine.Option{httpengine.WithFields(8)}, "unknown fields"},
		{"empty allow-list", store, httpengine.Limit(api, headerKey), []httpengine.Option{httpengine.WithAllowList(nil)}, "no prefixes"},
		{"nil option", store, httpengine.Limit(api, headerKey), []httpengine.Option{nil}, "nil option"},
		{"release timeout", store, httpengine.Limit(api, headerKey), []httpengine.Option{httpengine.WithReleaseTimeout(0)}, "positive timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := httpengine.New(tt.store, tt.limits, tt.options...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, %v; want an error containing %q", l, err, tt.want)
			}
		})
	}
	if _, err := httpengine.New(store, httpengine.Limit(api, headerKey), httpengine.WithCost(21)); !errors.Is(err, core.ErrInvalidCost) {
		t.Errorf("a cost the policy can never admit: %v does not wrap core.ErrInvalidCost", err)
	}
}

func TestMustPanicsOnInvalidConfiguration(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Must did not panic")
		}
	}()
	httpengine.Must(nil, httpengine.Limits{})
}

func TestSkipAndAllowList(t *testing.T) {
	store, _ := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	l := httpengine.Must(store, httpengine.Limit(one, headerKey),
		httpengine.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" }),
		httpengine.WithAllowList(nil, mustPrefix("10.0.0.0/8"), mustPrefix("::ffff:192.168.0.0/112")),
	)
	for _, r := range []*http.Request{
		request("10.1.2.3:5000", "X-Key", "a"),
		request("[::ffff:10.9.9.9]:5000", "X-Key", "a"),
		request("192.168.3.4:5000", "X-Key", "a"),
		withPath(request("192.0.2.1:1", "X-Key", "a"), "/healthz"),
	} {
		for range 3 {
			w := serve(l, r, ok)
			if w.Code != 200 || w.Header().Get("RateLimit") != "" {
				t.Fatalf("%s %s: status %d, fields %q: want exempt", r.RemoteAddr, r.URL.Path, w.Code, w.Header().Get("RateLimit"))
			}
		}
	}
	// Not on the list: limited, even with a forged X-Forwarded-For.
	r := request("192.0.2.1:5000", "X-Key", "a", "X-Forwarded-For", "10.0.0.1")
	if w := serve(l, r, ok); w.Code != 200 {
		t.Fatalf("first request: %d", w.Code)
	}
	if w := serve(l, r, ok); w.Code != http.StatusTooManyRequests {
		t.Fatalf("second request: %d, want 429", w.Code)
	}
}

func withPath(r *http.Request, path string) *http.Request {
	r.URL.Path = path
	return r
}

func TestPolicyFuncPlanChangeTakesEffectOnNextRequest(t *testing.T) {
	store, _ := newStore(t)
	free := core.MustPolicy("plan", core.FixedWindow, core.PerMinute(2))
	pro := core.MustPolicy("plan", core.FixedWindow, core.PerMinute(5))
	plans := map[string]core.Policy{"acme": free}
	l := httpengine.Must(store, httpengine.LimitFunc(func(r *http.Request) (core.Policy, error) {
		p, found := plans[r.Header.Get("X-Key")]
		if !found {
			return core.Policy{}, errors.New("unknown tenant")
		}
		return p, nil
	}, headerKey))
	codes := func(n int) []int {
		var got []int
		for range n {
			got = append(got, serve(l, request("192.0.2.1:1", "X-Key", "acme"), ok).Code)
		}
		return got
	}
	if got := codes(3); got[0] != 200 || got[1] != 200 || got[2] != 429 {
		t.Fatalf("free plan: %v, want 200 200 429", got)
	}
	plans["acme"] = pro
	w := serve(l, request("192.0.2.1:1", "X-Key", "acme"), ok)
	if w.Code != 200 || w.Header().Get("RateLimit-Policy") != `"plan";q=5;w=60` {
		t.Fatalf("after the upgrade: %d %q, want 200 with q=5", w.Code, w.Header().Get("RateLimit-Policy"))
	}
	if w := serve(l, request("192.0.2.1:1", "X-Key", "nobody"), ok); w.Code != http.StatusInternalServerError {
		t.Fatalf("failing policy function: %d, want 500", w.Code)
	}
}
