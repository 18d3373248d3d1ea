package httpengine_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// scriptedStore answers each decision with the next results of a script, in a
// loop, for every policy of the stack alike.
type scriptedStore struct {
	constantStore
	script []core.Result
	next   int
}

func (s *scriptedStore) result(name string) core.Result {
	res := s.script[s.next%len(s.script)]
	res.Policy = name
	return res
}

func (s *scriptedStore) Decide(_ context.Context, req core.Request) (core.Result, error) {
	defer func() { s.next++ }()
	return s.result(req.Policy.Name()), nil
}

func (s *scriptedStore) DecideStack(_ context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	defer func() { s.next++ }()
	allowed := true
	for i := range reqs {
		results[i] = s.result(reqs[i].Policy.Name())
		allowed = allowed && results[i].Allowed
	}
	return allowed, nil
}

// TestRepeatedFieldValues runs scripts whose results repeat, change by one number
// only, and alternate, on one Ticket after another, and checks every field of every
// response (kept until the end) against an independent rendering.
func TestRepeatedFieldValues(t *testing.T) {
	key := func(*http.Request) (string, error) { return "k", nil }
	a := core.MustPolicy("a", core.FixedWindow, core.PerHour(5000))
	b := core.MustPolicy("b", core.FixedWindow, core.PerHour(5000))
	admit := func(remaining int64, reset time.Duration) core.Result {
		return core.Result{Allowed: true, Limit: 5000, Remaining: remaining, ResetAfter: reset}
	}
	refuse := func(retry time.Duration) core.Result {
		return core.Result{Limit: 5000, RetryAfter: retry, ResetAfter: retry}
	}
	script := []core.Result{
		admit(300, time.Hour), admit(300, time.Hour), admit(300, time.Hour-time.Second),
		admit(299, time.Hour-time.Second), admit(299, time.Hour-time.Second),
		refuse(3000 * time.Second), refuse(3000 * time.Second), refuse(2999 * time.Second),
		admit(5, 30*time.Second), refuse(3000 * time.Second), admit(300, time.Hour),
	}
	for name, limits := range map[string]httpengine.Limits{
		"one":   httpengine.Limit(a, key),
		"stack": httpengine.Stack(httpengine.Limit(a, key), httpengine.Limit(b, key)),
	} {
		t.Run(name, func(t *testing.T) {
			store := &scriptedStore{script: script}
			l := httpengine.Must(store, limits, httpengine.WithFields(httpengine.IETFFields|httpengine.LegacyFields))
			var kept []http.Header
			var want []map[string]string
			for i := range 3 * len(script) {
				h := http.Header{}
				tk := l.Start(request("192.0.2.1:1"), h)
				res := script[i%len(script)]
				reset := int64((res.ResetAfter + time.Second - 1) / time.Second)
				w := map[string]string{
					"RateLimit":             render(tk.Results(), 3600),
					"X-RateLimit-Limit":     "5000",
					"X-RateLimit-Remaining": strconv.FormatInt(max(0, res.Remaining), 10),
					"X-RateLimit-Reset":     strconv.FormatInt(reset, 10),
					"Retry-After":           "",
				}
				if !res.Allowed {
					w["Retry-After"] = strconv.FormatInt(reset, 10)
				}
				kept, want = append(kept, h), append(want, w)
				tk.Finish(200, true)
			}
			for i := range kept {
				for field, v := range want[i] {
					if got := kept[i].Get(field); got != v {
						t.Errorf("response %d: %s %q, want %q", i+1, field, got, v)
					}
				}
			}
		})
	}
}
