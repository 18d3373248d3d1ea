package httpengine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// A failing policy function is answered 500, logged once at error level with the
// route and the reason but not the key, and a burst of them is not a burst of lines.
func TestFailingPolicyFunctionIsLoggedAndClassified(t *testing.T) {
	store, _ := newStore(t)
	var logs bytes.Buffer
	var reasons []string
	l := httpengine.Must(store, httpengine.LimitFunc(func(*http.Request) (core.Policy, error) {
		return core.Policy{}, errors.New("plan database down")
	}, func(*http.Request) (string, error) { return "user:secret-alice", nil }),
		httpengine.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		httpengine.WithObserver(observerFunc(func(err error) { reasons = append(reasons, httpengine.ErrorReason(err)) })))
	for range 5 {
		r := request("192.0.2.1:1")
		r.Pattern = "GET /api/resource"
		if w := serve(l, r, ok); w.Code != http.StatusInternalServerError {
			t.Fatalf("status %d, want 500", w.Code)
		}
	}
	out := logs.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "reason=policy") ||
		!strings.Contains(out, `route="GET /api/resource"`) || !strings.Contains(out, "plan database down") {
		t.Fatalf("log:\n%s", out)
	}
	if strings.Contains(out, "secret-alice") {
		t.Fatalf("the key reached the log:\n%s", out)
	}
	if len(reasons) != 5 || reasons[0] != httpengine.ReasonPolicy {
		t.Fatalf("observer saw %v, want 5 policy errors", reasons)
	}
}

// What a policy or cost function returns that cannot be decided is classified as
// that function's failure, as a function's own error is: the zero Policy as
// "policy", a cost below 1 or above what the policy admits at once as "cost" (they
// were "other", and ratelimit_errors_total filed them there).
func TestInvalidReturnsOfFunctionsAreClassified(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	var reason string
	observe := httpengine.WithObserver(observerFunc(func(err error) { reason = httpengine.ErrorReason(err) }))
	cost := func(c int64) httpengine.Option {
		return httpengine.WithCostFunc(func(*http.Request) (int64, error) { return c, nil })
	}
	zero := func(*http.Request) (core.Policy, error) { return core.Policy{}, nil }
	for _, tc := range []struct {
		name   string
		l      *httpengine.Limiter
		want   string
		status int
	}{
		{"zero policy", httpengine.Must(store, httpengine.LimitFunc(zero, peerKey), observe), httpengine.ReasonPolicy, http.StatusInternalServerError},
		{"cost 0", httpengine.Must(store, httpengine.Limit(api, peerKey), cost(0), observe), httpengine.ReasonCost, http.StatusInternalServerError},
		// The request's own price (ErrCostTooHigh): the client's, so 400.
		{"cost above the capacity", httpengine.Must(store, httpengine.Limit(api, peerKey), cost(100), observe), httpengine.ReasonCost, http.StatusBadRequest},
	} {
		reason = ""
		if w := serve(tc.l, request("192.0.2.1:1"), ok); w.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, w.Code, tc.status)
		}
		if reason != tc.want {
			t.Errorf("%s: reason %q, want %q", tc.name, reason, tc.want)
		}
	}
}

func TestWithRouteCostsValidates(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	for costs, want := range map[*map[string]int64]string{
		{"/report": 0}:  `route "/report": cost must be at least 1`,
		{"/report": 11}: `route "/report"`,
		{}:              "empty table",
	} {
		_, err := httpengine.New(store, httpengine.Limit(api, peerKey), httpengine.WithRouteCosts(*costs))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one naming %s", *costs, err, want)
		}
	}
	if _, err := httpengine.New(store, httpengine.Limit(api, peerKey), httpengine.WithRouteCosts(map[string]int64{"/x": 2}),
		httpengine.WithCostFunc(func(*http.Request) (int64, error) { return 1, nil })); err == nil {
		t.Error("WithRouteCosts with WithCostFunc: no error")
	}
}

// observerFunc is an Observer that reports errors to a function.
type observerFunc func(error)

func (f observerFunc) OnDecision(*httpengine.Event)       {}
func (f observerFunc) OnError(_ *http.Request, err error) { f(err) }

// A client that leaves while its API key is checked is no error of the limiter's: the
// validator's cancellation is logged at debug, while the same validator failing for
// a live request is logged at error.
func TestValidatorCancelledWithItsRequestIsLoggedAtDebug(t *testing.T) {
	store, _ := newStore(t)
	var logs bytes.Buffer
	valid := func(ctx context.Context, _ string) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		return false, errors.New("auth backend down")
	}
	l := httpengine.Must(store, httpengine.Limit(core.MustPolicy("api", core.FixedWindow, core.PerMinute(10)),
		keyfuncs.ValidAPIKey("X-API-Key", valid)),
		httpengine.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := request("192.0.2.1:1").WithContext(ctx)
	r.Header.Set("X-API-Key", "k1")
	serve(l, r, ok)
	if out := logs.String(); strings.Contains(out, "level=ERROR") || !strings.Contains(out, "level=DEBUG") {
		t.Fatalf("a request that ended while its key was checked:\n%s", out)
	}
	logs.Reset()
	r = request("192.0.2.1:1")
	r.Header.Set("X-API-Key", "k1")
	serve(l, r, ok)
	if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "auth backend down") {
		t.Fatalf("a live request whose validator failed:\n%s", out)
	}
}
