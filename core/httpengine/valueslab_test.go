package httpengine_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// TestFieldValuesOutliveTheirTicket keeps the fields of thousands of finished
// requests (whose Tickets were recycled and reused meanwhile), reading the earlier
// ones while later requests are decided, and checks that none of them changed: a
// response may be written, or its header kept, after Finish.
func TestFieldValuesOutliveTheirTicket(t *testing.T) {
	key := func(*http.Request) (string, error) { return "k", nil }
	plan := func(*http.Request) (core.Policy, error) {
		return core.MustPolicy("plan", core.FixedWindow, core.PerMinute(1<<40)), nil
	}
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	for name, limits := range map[string]httpengine.Limits{
		"static":  httpengine.Limit(api, key),
		"dynamic": httpengine.Stack(httpengine.Limit(api, key), httpengine.LimitFunc(plan, key)),
	} {
		t.Run(name, func(t *testing.T) {
			l := httpengine.Must(&countingStore{}, limits)
			type kept struct {
				header         http.Header
				policy, fields string
			}
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var all []kept
					for i := range 2000 {
						h := http.Header{}
						tk := l.Start(request("192.0.2.1:1"), h)
						all = append(all, kept{h, policyValue(tk), render(tk.Results(), 1)})
						tk.Finish(200, true)
						if old := all[i/2]; old.header.Get("RateLimit") != old.fields || old.header.Get("RateLimit-Policy") != old.policy {
							t.Errorf("request %d: fields changed after Finish: %v, want %q and %q", i/2, old.header, old.fields, old.policy)
							return
						}
					}
					for i, k := range all {
						if k.header.Get("RateLimit") != k.fields || k.header.Get("RateLimit-Policy") != k.policy {
							t.Errorf("request %d: fields changed after Finish: %v, want %q and %q", i, k.header, k.fields, k.policy)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// policyValue is the RateLimit-Policy value of a ticket's policies, written
// independently of the engine.
func policyValue(tk *httpengine.Ticket) string {
	v := ""
	for i, res := range tk.Results() {
		if i > 0 {
			v += ", "
		}
		switch res.Policy {
		case "api":
			v += `"api";q=10;w=1`
		default:
			v += fmt.Sprintf("%q;q=%d;w=60", res.Policy, int64(1)<<40)
		}
	}
	return v
}
