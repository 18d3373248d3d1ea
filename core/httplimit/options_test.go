package httplimit_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// events records what an Observer hears.
type events struct {
	decisions []string // "policy key verdict" of each policy of each decision
	errors    []string // ErrorReason of each error
	fallbacks []httplimit.FallbackKind
}

func (o *events) OnDecision(e *httplimit.Event) {
	for i := range e.Requests {
		o.decisions = append(o.decisions, fmt.Sprintf("%s %s %s", e.Requests[i].Policy.Name(), e.Requests[i].Key, e.Verdict(i)))
	}
}
func (o *events) OnError(_ *http.Request, err error) {
	o.errors = append(o.errors, httplimit.ErrorReason(err))
}
func (o *events) OnKeyFallback(_ *http.Request, _ string, kind httplimit.FallbackKind) {
	o.fallbacks = append(o.fallbacks, kind)
}

var _ httplimit.KeyFallbackObserver = (*events)(nil)

// TestOptionsReachTheLimiter serves requests through a ServeMux route limited
// with each of httplimit's constructors and options, and checks what each one
// asked for: every one passes its argument on to the limiter.
func TestOptionsReachTheLimiter(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	byIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}).Key
	noKey := func(*http.Request) (string, error) { return "", keyfuncs.ErrNoKey }
	quiet := slog.New(slog.DiscardHandler)

	type response struct {
		code   int
		fields string // RateLimit, or X-RateLimit-Remaining when LegacyFields
	}
	for _, tc := range []struct {
		name    string
		limits  httplimit.Limits
		options []httplimit.Option
		want    []response // one per request, in order
		check   func(t *testing.T, o *events, log string)
	}{
		{name: "Limit", limits: httplimit.Limit(api, byIP),
			want: []response{{200, `"api";r=9;t=60`}, {200, `"api";r=8;t=60`}}},
		{name: "LimitFunc", limits: httplimit.LimitFunc(func(*http.Request) (core.Policy, error) { return one, nil }, byIP),
			want: []response{{200, `"one";r=0;t=60`}, {429, `"one";r=0;t=60`}}},
		{name: "Stack", limits: httplimit.Stack(httplimit.Limit(api, byIP), httplimit.Limit(one, byIP)),
			want: []response{{200, `"api";r=9;t=60, "one";r=0;t=60`}, {429, `"api";r=9;t=60, "one";r=0;t=60`}}},
		{name: "WithCost", limits: httplimit.Limit(api, byIP), options: []httplimit.Option{httplimit.WithCost(3)},
			want: []response{{200, `"api";r=7;t=60`}, {200, `"api";r=4;t=60`}}},
		{name: "WithCostFunc", limits: httplimit.Limit(api, byIP),
			options: []httplimit.Option{httplimit.WithCostFunc(func(*http.Request) (int64, error) { return 4, nil })},
			want:    []response{{200, `"api";r=6;t=60`}, {200, `"api";r=2;t=60`}}},
		{name: "WithRouteCosts", limits: httplimit.Limit(api, byIP),
			options: []httplimit.Option{httplimit.WithRouteCosts(map[string]int64{"GET /x": 2})},
			want:    []response{{200, `"api";r=8;t=60`}, {200, `"api";r=6;t=60`}}},
		{name: "WithSettle", limits: httplimit.Limit(api, byIP),
			options: []httplimit.Option{httplimit.WithSettle(func(*http.Request, int, int64) int64 { return 0 })},
			want:    []response{{200, `"api";r=9;t=60`}, {200, `"api";r=9;t=60`}}}, // each refunded after its handler
		{name: "WithSkip", limits: httplimit.Limit(one, byIP),
			options: []httplimit.Option{httplimit.WithSkip(func(*http.Request) bool { return true })},
			want:    []response{{200, ""}, {200, ""}}},
		{name: "WithAllowList", limits: httplimit.Limit(one, byIP),
			options: []httplimit.Option{httplimit.WithAllowList(nil, netip.MustParsePrefix("192.0.2.0/24"))},
			want:    []response{{200, ""}, {200, ""}}},
		{name: "WithShadow", limits: httplimit.Limit(one, byIP), options: []httplimit.Option{httplimit.WithShadow()},
			want: []response{{200, `"one";r=0;t=60`}, {200, `"one";r=0;t=60`}},
			check: func(t *testing.T, o *events, _ string) {
				if want := []string{"one ip:192.0.2.1 allowed", "one ip:192.0.2.1 shadow_denied"}; fmt.Sprint(o.decisions) != fmt.Sprint(want) {
					t.Errorf("observer heard %q, want %q", o.decisions, want)
				}
			}},
		{name: "WithFields", limits: httplimit.Limit(api, byIP), options: []httplimit.Option{httplimit.WithFields(httplimit.LegacyFields)},
			want: []response{{200, "9"}, {200, "8"}}},
		{name: "ClientIPFallback", limits: httplimit.Limit(api, noKey),
			options: []httplimit.Option{httplimit.WithKeyFallback(httplimit.ClientIPFallback(keyfuncs.Const("fallback")))},
			want:    []response{{200, `"api";r=9;t=60`}, {200, `"api";r=8;t=60`}},
			check: func(t *testing.T, o *events, _ string) {
				if len(o.decisions) != 2 || o.decisions[0] != "api fallback allowed" || fmt.Sprint(o.fallbacks) != "[ip ip]" {
					t.Errorf("observer heard %q, fallbacks %q", o.decisions, o.fallbacks)
				}
			}},
		{name: "RefuseFallback", limits: httplimit.Limit(api, noKey),
			options: []httplimit.Option{httplimit.WithKeyFallback(httplimit.RefuseFallback()), httplimit.WithLogger(quiet)},
			want:    []response{{400, ""}, {400, ""}},
			check: func(t *testing.T, o *events, _ string) {
				if fmt.Sprint(o.errors) != "[key key]" || fmt.Sprint(o.fallbacks) != "[refuse refuse]" {
					t.Errorf("observer heard errors %q, fallbacks %q", o.errors, o.fallbacks)
				}
			}},
		{name: "SkipFallback", limits: httplimit.Limit(api, noKey),
			options: []httplimit.Option{httplimit.WithKeyFallback(httplimit.SkipFallback())},
			want:    []response{{200, ""}, {200, ""}}},
		{name: "WithLogger", limits: httplimit.Limit(api, func(*http.Request) (string, error) { return "", errors.New("broken") }),
			want: []response{{400, ""}, {400, ""}},
			check: func(t *testing.T, o *events, log string) {
				if strings.Count(log, "request not decided") != 1 || !strings.Contains(log, "broken") {
					t.Errorf("log %q, want one line about the broken key function", log)
				}
			}},
		{name: "WithLogger, malformed request", limits: httplimit.Limit(api, func(*http.Request) (string, error) { return "", keyfuncs.ErrBadForm }),
			want: []response{{400, ""}, {400, ""}},
			check: func(t *testing.T, o *events, log string) {
				if log != "" || fmt.Sprint(o.errors) != "[key key]" {
					t.Errorf("log %q, errors %q: want the client's malformed requests counted, not logged above debug", log, o.errors)
				}
			}},
		{name: "WithReleaseTimeout", limits: httplimit.Limit(api, byIP), options: []httplimit.Option{httplimit.WithReleaseTimeout(time.Minute)},
			want: []response{{200, `"api";r=9;t=60`}, {200, `"api";r=8;t=60`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
			defer store.Close()
			o := &events{}
			var log bytes.Buffer
			options := append([]httplimit.Option{httplimit.WithObserver(o),
				httplimit.WithLogger(slog.New(slog.NewTextHandler(&log, nil)))}, tc.options...)
			mux := http.NewServeMux()
			mux.HandleFunc("GET /x", func(http.ResponseWriter, *http.Request) {})
			h, err := nethttp.New(store, tc.limits, options...)
			if err != nil {
				t.Fatal(err)
			}
			handler := h(mux)
			for i, want := range tc.want {
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/x", nil))
				fields := w.Header().Get("RateLimit")
				if w.Header().Get("X-RateLimit-Remaining") != "" {
					fields = w.Header().Get("X-RateLimit-Remaining")
				}
				if got := (response{w.Code, fields}); got != want {
					t.Errorf("request %d: %v, want %v", i+1, got, want)
				}
			}
			if tc.check != nil {
				tc.check(t, o, log.String())
			}
		})
	}
}

// TestOptionsRefuseBadArguments checks that httplimit's constructors keep the
// engine's validation: the router's New fails, naming the option.
func TestOptionsRefuseBadArguments(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	key := keyfuncs.Const("k")
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	for _, tc := range []struct {
		option httplimit.Option
		want   string
	}{
		{httplimit.WithCost(0), "WithCost"},
		{httplimit.WithCost(11), "WithCost(11)"},
		{httplimit.WithCostFunc(nil), "WithCostFunc"},
		{httplimit.WithRouteCosts(nil), "WithRouteCosts"},
		{httplimit.WithSettle(nil), "WithSettle"},
		{httplimit.WithSkip(nil), "WithSkip"},
		{httplimit.WithAllowList(nil), "WithAllowList"},
		{httplimit.WithObserver(nil), "WithObserver"},
		{httplimit.WithFields(httplimit.Fields(0x80)), "WithFields"},
		{httplimit.WithLogger(nil), "WithLogger"},
		{httplimit.WithReleaseTimeout(0), "WithReleaseTimeout"},
	} {
		_, err := nethttp.New(store, httplimit.Limit(api, key), tc.option)
		if err == nil || !strings.Contains(err.Error(), "httplimit: "+tc.want) {
			t.Errorf("error %v, want one naming httplimit: %s", err, tc.want)
		}
	}
	_, err := nethttp.New(store, httplimit.Stack(httplimit.Limit(api, key), httplimit.Limit(core.MustPolicy("b", core.FixedWindow, core.PerMinute(1)), key)),
		httplimit.WithKeyFallback(httplimit.SkipFallback()))
	if err == nil || !strings.Contains(err.Error(), "SkipFallback") {
		t.Errorf("SkipFallback on a stack: %v, want an error naming it", err)
	}
}

// TestErrorsAreTheEngines checks that the sentinel errors and reasons an error
// handler or observer tests for are the ones the limiter wraps.
func TestErrorsAreTheEngines(t *testing.T) {
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	var got error
	h := nethttp.Middleware(store, httplimit.Limit(core.MustPolicy("api", core.FixedWindow, core.PerMinute(1)),
		func(*http.Request) (string, error) { return "", keyfuncs.ErrNoKey }),
		httplimit.WithKeyFallback(httplimit.RefuseFallback()), httplimit.WithLogger(slog.New(slog.DiscardHandler)),
		nethttp.WithErrorHandler(func(w http.ResponseWriter, _ *http.Request, err error) { got = err; w.WriteHeader(400) }),
	)(http.NotFoundHandler())
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if !errors.Is(got, httplimit.ErrUnidentified) || errors.Is(got, httplimit.ErrStore) || httplimit.ErrorReason(got) != httplimit.ReasonKey {
		t.Fatalf("error %v: want one wrapping ErrUnidentified, reason %q", got, httplimit.ReasonKey)
	}
	if r := httplimit.ErrorReason(fmt.Errorf("x: %w", httplimit.ErrStore)); r != httplimit.ReasonStore {
		t.Fatalf("ErrorReason of a store error: %q", r)
	}
}
