package httpengine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
)

// withoutRefunds hides a store's Refund.
type withoutRefunds struct{ core.Store }

// On a store that cannot refund, a turn that admitted keeps its charge when a
// later turn refuses. When that refusal is an observed rule's alone, the merged
// decision admits without asking the kept turn again, which would charge it
// twice.
func TestAKeptTurnIsNeverAskedAgain(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(5))
	mem, err := memory.New(memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	ctx := context.Background()
	if res, _ := mem.Decide(ctx, core.Request{Policy: api, Key: "observed", Cost: 5}); !res.Allowed {
		t.Fatal("setup")
	}
	l := Must(withoutRefunds{mem}, Limit(api, func(*http.Request) (string, error) { return "enforced", nil }))
	tk := &Ticket{r: httptest.NewRequest(http.MethodGet, "/", nil)}
	reqs := []core.Request{{Policy: api, Key: "enforced", Cost: 1}, {Policy: api, Key: "observed", Cost: 1}}
	results := make([]core.Result, len(reqs))
	entries := []mergeEntry{{from: -1}, {from: -1, observed: true}}
	if allowed, err := l.decideMerged(ctx, tk, reqs, entries, results); err != nil || !allowed {
		t.Fatalf("allowed %v, %v; want admitted: only the observed rule refused", allowed, err)
	}
	if res, _ := mem.Decide(ctx, core.Request{Policy: api, Key: "enforced", Cost: 1}); res.Remaining != 3 {
		t.Fatalf("the enforced bucket after the decision and this probe: %d left, want 3 (charged once)", res.Remaining)
	}
}
