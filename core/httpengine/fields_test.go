package httpengine_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

func TestFieldsOfOnePolicy(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	l := httpengine.Must(store, httpengine.Limit(api, headerKey))

	// 20 tokens earn back at 10/s: w=2. Each request spends one; the bucket is full
	// again 100ms per token spent later.
	steps := []struct {
		status     int
		rateLimit  string
		retryAfter string
	}{
		{200, `"api";r=19;t=1`, ""},
	}
	for i := 2; i <= 20; i++ {
		steps = append(steps, struct {
			status     int
			rateLimit  string
			retryAfter string
		}{200, "", ""})
	}
	steps[19].rateLimit = `"api";r=0;t=2`
	steps = append(steps, struct {
		status     int
		rateLimit  string
		retryAfter string
	}{429, `"api";r=0;t=1`, "1"})

	for i, step := range steps {
		w := serve(l, request("192.0.2.1:1000", "X-Key", "alice"), ok)
		if w.Code != step.status {
			t.Fatalf("request %d: status %d, want %d", i+1, w.Code, step.status)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"api";q=20;w=2` {
			t.Fatalf("request %d: RateLimit-Policy %q", i+1, got)
		}
		if step.rateLimit != "" {
			if got := w.Header().Get("RateLimit"); got != step.rateLimit {
				t.Fatalf("request %d: RateLimit %q, want %q", i+1, got, step.rateLimit)
			}
		}
		if got := w.Header().Get("Retry-After"); got != step.retryAfter {
			t.Fatalf("request %d: Retry-After %q, want %q", i+1, got, step.retryAfter)
		}
	}
}

func TestFieldsWindowsRoundUp(t *testing.T) {
	tests := []struct {
		policy core.Policy
		field  string
	}{
		{core.MustPolicy("fw", core.FixedWindow, core.PerMinute(5)), `"fw";q=5;w=60`},
		{core.MustPolicy("sw", core.SlidingWindow, core.Rate{Limit: 3, Period: 1500 * time.Millisecond}), `"sw";q=3;w=2`},
		{core.MustPolicy("lb", core.LeakyBucket, core.PerSecond(2), core.WithBurst(3)), `"lb";q=3;w=2`},
		{core.MustPolicy("tb", core.TokenBucket, core.Rate{Limit: 1000, Period: 100 * time.Millisecond}), `"tb";q=1000;w=1`},
		{core.MustPolicy("gcra", core.GCRA, core.PerHour(60), core.WithBurst(5)), `"gcra";q=5;w=300`},
		{core.MustConcurrencyPolicy("cc", 2, 30*time.Second), `"cc";q=2;qu="concurrent-requests"`},
	}
	for _, tt := range tests {
		t.Run(tt.policy.Name(), func(t *testing.T) {
			store, _ := newStore(t)
			l := httpengine.Must(store, httpengine.Limit(tt.policy, headerKey))
			w := serve(l, request("192.0.2.1:1000", "X-Key", "a"), ok)
			if got := w.Header().Get("RateLimit-Policy"); got != tt.field {
				t.Errorf("RateLimit-Policy %q, want %q", got, tt.field)
			}
		})
	}
}

func TestStackFieldsInOrderAndRetryAfterNotBeforeT(t *testing.T) {
	store, clock := newStore(t)
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	perIP := core.MustPolicy("ip", core.FixedWindow, core.PerMinute(20))
	subnet := core.MustPolicy("subnet", core.SlidingWindow, core.PerMinute(100))
	l := httpengine.Must(store, httpengine.Stack(
		httpengine.Limit(account, headerKey),
		httpengine.Limit(perIP, keyfuncs.KeyFunc(func(*http.Request) (string, error) { return "ip:1", nil })),
		httpengine.Limit(subnet, keyfuncs.KeyFunc(func(*http.Request) (string, error) { return "net:1", nil })),
	))
	var w interface{ Header() http.Header }
	for i := range 5 {
		clock.Advance(time.Second)
		rec := serve(l, request("192.0.2.1:1000", "X-Key", "alice"), ok)
		if rec.Code != 200 {
			t.Fatalf("attempt %d: status %d", i+1, rec.Code)
		}
	}
	clock.Advance(time.Second) // 6 s after the first attempt
	rec := serve(l, request("192.0.2.1:1000", "X-Key", "alice"), ok)
	w = rec
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("6th attempt: status %d, want 429", rec.Code)
	}
	if got, want := w.Header().Get("RateLimit-Policy"), `"account";q=5;w=60, "ip";q=20;w=60, "subnet";q=100;w=60`; got != want {
		t.Errorf("RateLimit-Policy %q\nwant %q", got, want)
	}
	// The account log frees its first entry 60 s after it was admitted, 5 s before
	// now: t=55. The ip window (aligned to the minute) resets 54 s from now with
	// 5 spent; the subnet estimate recovers two windows after its start (114 s),
	// which t reports as its w: t never exceeds w.
	if got, want := w.Header().Get("RateLimit"), `"account";r=0;t=55, "ip";r=15;t=54, "subnet";r=95;t=60`; got != want {
		t.Errorf("RateLimit %q\nwant %q", got, want)
	}
	if got := w.Header().Get("Retry-After"); got != "55" {
		t.Errorf("Retry-After %q, want 55", got)
	}
	body := rec.Body.String()
	want := `{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"Rate limit exceeded; retry in 55 seconds.","retry_after":55,"violated_policies":["account"]}`
	if body != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != httpengine.ProblemContentType {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestLegacyFieldsAndNoFields(t *testing.T) {
	store, _ := newStore(t)
	small := core.MustPolicy("small", core.FixedWindow, core.PerMinute(2))
	big := core.MustPolicy("big", core.FixedWindow, core.PerMinute(10))
	stack := httpengine.Stack(httpengine.Limit(big, headerKey), httpengine.Limit(small, headerKey))

	legacy := httpengine.Must(store, stack, httpengine.WithFields(httpengine.IETFFields|httpengine.LegacyFields))
	w := serve(legacy, request("192.0.2.1:1000", "X-Key", "a"), ok)
	for name, want := range map[string]string{
		"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "60",
		"RateLimit": `"big";r=9;t=60, "small";r=1;t=60`,
	} {
		if got := w.Header().Get(name); got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}

	none := httpengine.Must(store, stack, httpengine.WithFields(httpengine.NoFields))
	w = serve(none, request("192.0.2.1:1000", "X-Key", "a"), ok)
	if w.Code != http.StatusOK || w.Header().Get("RateLimit") != "" {
		t.Fatalf("status %d, RateLimit %q: want 200 and no fields", w.Code, w.Header().Get("RateLimit"))
	}
	w = serve(none, request("192.0.2.1:1000", "X-Key", "a"), ok)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", w.Code)
	}
	for _, name := range []string{"RateLimit", "RateLimit-Policy", "X-RateLimit-Limit"} {
		if got := w.Header().Values(name); got != nil {
			t.Errorf("%s sent with NoFields: %q", name, got)
		}
	}
	if got := w.Header().Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After %q, want 60 even with NoFields", got)
	}
}

// An idle leaky bucket would admit one request beyond its burst, so a peek at it
// (in a stack another policy refused) reports Remaining = q+1: RateLimit shows q.
func TestFieldsNeverShowMoreRemainingThanTheQuota(t *testing.T) {
	store, clock := newStore(t)
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(10), core.WithBurst(4))
	closed := core.MustPolicy("closed", core.FixedWindow, core.PerHour(1))
	l := httpengine.Must(store, httpengine.Stack(httpengine.Limit(queue, headerKey), httpengine.Limit(closed, headerKey)))
	serve(l, request("192.0.2.1:1000", "X-Key", "bob"), ok) // spends the hour's one request
	clock.Advance(time.Second)                              // the queue drains: idle again
	w := serve(l, request("192.0.2.1:1000", "X-Key", "bob"), ok)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", w.Code)
	}
	if got := w.Header().Get("RateLimit"); got != `"queue";r=4;t=0, "closed";r=0;t=3599` {
		t.Errorf("RateLimit %q, want r=4 for the queue (its q)", got)
	}
}

// Limiters on different stores decide separately, and the innermost writes the
// fields last: they list the outer one's policies too, and the legacy fields show
// the most restrictive of both. A Limiter that writes no fields is not listed.
func TestFieldsOfLayersOnDifferentStores(t *testing.T) {
	first, _ := newStore(t)
	second, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(3))
	peer := core.MustPolicy("peer", core.FixedWindow, core.PerMinute(100))
	both := httpengine.WithFields(httpengine.IETFFields | httpengine.LegacyFields)
	outer := httpengine.Must(first, httpengine.Limit(api, peerKey), both)
	inner := httpengine.Must(second, httpengine.Limit(peer, peerKey), both)
	w := nested(outer, inner, request("192.0.2.1:1"))
	want := map[string]string{
		"RateLimit-Policy":      `"api";q=3;w=60, "peer";q=100;w=60`,
		"RateLimit":             `"api";r=2;t=60, "peer";r=99;t=60`,
		"X-RateLimit-Limit":     "3",
		"X-RateLimit-Remaining": "2",
	}
	for name, value := range want {
		if got := w.Header().Values(name); len(got) != 1 || got[0] != value {
			t.Errorf("%s %q, want %q", name, got, value)
		}
	}

	hidden := httpengine.Must(first, httpengine.Limit(api, peerKey), httpengine.WithFields(httpengine.NoFields))
	w = nested(hidden, inner, request("192.0.2.1:1"))
	if got := w.Header().Get("RateLimit"); got != `"peer";r=98;t=60` {
		t.Errorf("under a Limiter without fields: RateLimit %q, want the inner policy alone", got)
	}
}

// A merged decision writes the fields of every Limiter merged into it: legacy
// fields an outer Limiter wrote show the merged numbers, not its own from before
// the merge.
func TestMergedDecisionWritesTheFieldsOfBothLayers(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	outer := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithFields(httpengine.LegacyFields))
	inner := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(5))
	w := nested(outer, inner, request("192.0.2.1:1"))
	if got := w.Header().Get("X-RateLimit-Remaining"); got != "5" {
		t.Errorf("X-RateLimit-Remaining %q, want 5 (charged once, at the inner cost)", got)
	}
	if got := w.Header().Get("RateLimit"); got != `"api";r=5;t=60` {
		t.Errorf("RateLimit %q, want r=5", got)
	}
}

// TestFieldsHoldFifteenDigitsAtMost: a structured-field integer has at most 15
// digits (RFC 8941), and a window policy's limit may reach 2^53. A larger quota or
// remainder is shown as 999999999999999, so a strict parser still reads the field.
func TestFieldsHoldFifteenDigitsAtMost(t *testing.T) {
	store, _ := newStore(t)
	huge := core.MustPolicy("bytes", core.FixedWindow, core.Rate{Limit: 4_000_000_000_000_000, Period: 24 * time.Hour})
	l := httpengine.Must(store, httpengine.Limit(huge, headerKey))
	w := serve(l, request("192.0.2.1:1000", "X-Key", "a"), ok)
	if got, want := w.Header().Get("RateLimit-Policy"), `"bytes";q=999999999999999;w=86400`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got, want := w.Header().Get("RateLimit"), `"bytes";r=999999999999999;t=86400`; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
}
