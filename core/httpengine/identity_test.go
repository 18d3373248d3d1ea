package httpengine_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// fallbackRecorder is a KeyFallbackObserver that keeps the fallbacks it hears of.
type fallbackRecorder struct {
	recorder
	fbMu      sync.Mutex
	fallbacks []string // "policy/kind"
}

func (o *fallbackRecorder) OnKeyFallback(_ *http.Request, policy string, kind httpengine.FallbackKind) {
	o.fbMu.Lock()
	defer o.fbMu.Unlock()
	o.fallbacks = append(o.fallbacks, policy+"/"+string(kind))
}

func TestKeyFallbacks(t *testing.T) {
	tenant := core.MustPolicy("tenant", core.FixedWindow, core.PerMinute(1))
	byHeader := func(r *http.Request) (string, error) {
		if r.Header.Get("X-Forwarded-For") == "" {
			return "", errors.New("no forwarding header")
		}
		return "ip:" + r.Header.Get("X-Forwarded-For"), nil
	}
	cases := []struct {
		name     string
		fallback httpengine.KeyFallback
		kind     httpengine.FallbackKind
		codes    []int // two requests without identity from one peer
		keys     []string
	}{
		{"default: the TCP peer", nil, httpengine.FallbackIP, []int{200, 429}, []string{"ip:192.0.2.1", "ip:192.0.2.1"}},
		{"client IP", httpengine.ClientIPFallback(nil), httpengine.FallbackIP, []int{200, 429}, []string{"ip:192.0.2.1", "ip:192.0.2.1"}},
		{"refuse", httpengine.RefuseFallback(), httpengine.FallbackRefuse, []int{400, 400}, nil},
		{"skip", httpengine.SkipFallback(), httpengine.FallbackSkip, []int{200, 200}, nil},
		{"failing fallback key refuses", httpengine.ClientIPFallback(byHeader), httpengine.FallbackIP, []int{400, 400}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			obs := &fallbackRecorder{}
			options := []httpengine.Option{httpengine.WithObserver(obs)}
			if tc.fallback != nil {
				options = append(options, httpengine.WithKeyFallback(tc.fallback))
			}
			l := httpengine.Must(store, httpengine.Limit(tenant, headerKey), options...)
			for i, want := range tc.codes {
				if w := serve(l, request("192.0.2.1:1"), ok); w.Code != want {
					t.Fatalf("request %d: status %d, want %d", i, w.Code, want)
				}
			}
			kind := string(tc.kind)
			if len(obs.fallbacks) != 2 || obs.fallbacks[0] != "tenant/"+kind || obs.fallbacks[1] != "tenant/"+kind {
				t.Fatalf("fallbacks heard: %v, want two tenant/%s", obs.fallbacks, kind)
			}
			if len(obs.keys) != len(tc.keys) {
				t.Fatalf("decisions %v, want keys %v", obs.keys, tc.keys)
			}
			for i := range tc.keys {
				if obs.keys[i][0] != tc.keys[i] || !obs.fellBack[i] {
					t.Fatalf("decision %d: key %q fellBack=%v, want %q true", i, obs.keys[i][0], obs.fellBack[i], tc.keys[i])
				}
			}
			// A request with its identity is decided under it, without a fallback.
			if w := serve(l, request("192.0.2.1:1", "X-Key", "acme"), ok); w.Code != http.StatusOK {
				t.Fatalf("identified request: status %d", w.Code)
			}
			if len(obs.fallbacks) != 2 {
				t.Fatalf("an identified request fell back: %v", obs.fallbacks)
			}
		})
	}
}

func TestWithKeyFallbackNilRefuses(t *testing.T) {
	store, _ := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	l := httpengine.Must(store, httpengine.Limit(one, headerKey), httpengine.WithKeyFallback(nil))
	if w := serve(l, request("192.0.2.1:1"), ok); w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", w.Code)
	}
}

func TestSkipFallbackRefusedForStacks(t *testing.T) {
	store, _ := newStore(t)
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	ip := core.MustPolicy("ip", core.SlidingLog, core.PerMinute(20))
	peer := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	_, err := httpengine.New(store, httpengine.Stack(httpengine.Limit(account, headerKey), httpengine.Limit(ip, peer.Key)),
		httpengine.WithKeyFallback(httpengine.SkipFallback()))
	if err == nil || !strings.Contains(err.Error(), "SkipFallback") {
		t.Fatalf("New = %v, want an error naming SkipFallback", err)
	}
}

// TestBadFormIsNotAMissingIdentity checks that a form net/http cannot parse is
// refused (400), never limited under the fallback key or skipped.
func TestBadFormIsNotAMissingIdentity(t *testing.T) {
	for _, fallback := range []httpengine.KeyFallback{httpengine.ClientIPFallback(nil), httpengine.SkipFallback()} {
		store, _ := newStore(t)
		account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
		obs := &fallbackRecorder{}
		l := httpengine.Must(store, httpengine.Limit(account, keyfuncs.FormUsername("username")),
			httpengine.WithKeyFallback(fallback), httpengine.WithObserver(obs))
		r := request("192.0.2.1:1")
		r.Method = http.MethodPost
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Body = nopCloser{strings.NewReader(strings.Repeat("a=1&", 10_001) + "username=alice")}
		if w := serve(l, r, ok); w.Code != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", w.Code)
		}
		if len(obs.fallbacks) != 0 || len(obs.keys) != 0 {
			t.Fatalf("an unparseable form fell back (%v) or was decided (%v)", obs.fallbacks, obs.keys)
		}
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// Every fallback is logged at debug through the Limiter's logger, with no observer
// set: the policy, the fallback and the route, never the request's path or address.
func TestKeyFallbackIsLoggedAtDebug(t *testing.T) {
	tenant := core.MustPolicy("tenant", core.FixedWindow, core.PerMinute(10))
	for _, tc := range []struct {
		level slog.Level
		want  bool
	}{{slog.LevelDebug, true}, {slog.LevelInfo, false}} {
		store, _ := newStore(t)
		var logs bytes.Buffer
		l := httpengine.Must(store, httpengine.Limit(tenant, headerKey),
			httpengine.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: tc.level}))))
		r := request("192.0.2.1:1")
		r.URL.Path, r.Pattern = "/accounts/alice", "GET /accounts/{name}"
		if w := serve(l, r, ok); w.Code != http.StatusOK {
			t.Fatalf("status %d, want 200 under the fallback key", w.Code)
		}
		out := logs.String()
		if !tc.want {
			if out != "" {
				t.Fatalf("logged at %v:\n%s", tc.level, out)
			}
			continue
		}
		for _, want := range []string{"level=DEBUG", "key fallback", "policy=tenant", "fallback=ip", `route="GET /accounts/{name}"`} {
			if !strings.Contains(out, want) {
				t.Errorf("the fallback's log line lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "alice") || strings.Contains(out, "192.0.2.1") {
			t.Errorf("the fallback's log line names the path or the address:\n%s", out)
		}
	}
}
