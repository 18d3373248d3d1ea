package resilient_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// Check decides on the reserved key for every algorithm, a stack and a lease, and
// classifies what goes wrong: permanent errors loudly, outages as unavailable.
func TestCheckClassifies(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	if err := r.store.Check(ctx); err != nil {
		t.Fatalf("a working store: %v", err)
	}
	if got := r.shared.calls.Load(); got != int64(len(core.Algorithms()))+2 {
		t.Fatalf("Check made %d calls, want one per algorithm, a release and a stack", got)
	}

	r.shared.fail(errWrongType)
	err := r.store.Check(ctx)
	if !errors.Is(err, resilient.ErrPermanent) || !errors.Is(err, errWrongType) || errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("a broken store: %v", err)
	}
	if log := r.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "fix the deployment") {
		t.Fatalf("not logged at error level:\n%s", log)
	}

	r.shared.fail(errDown)
	err = r.store.Check(ctx)
	if !errors.Is(err, core.ErrStoreUnavailable) || errors.Is(err, resilient.ErrPermanent) {
		t.Fatalf("an unreachable store: %v", err)
	}
	if r.store.Breaker() != resilient.BreakerClosed || len(r.rec.fallbacks) != 0 {
		t.Fatal("Check went through the breaker or the failure modes")
	}
}

// A store that answers with results of the wrong shape fails the check as permanent.
func TestCheckRejectsWrongResults(t *testing.T) {
	r := newRig(t)
	wrong := &wrongResults{fakeShared: r.shared}
	store, err := resilient.New(wrong)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Check(context.Background()); !errors.Is(err, resilient.ErrPermanent) {
		t.Fatalf("wrong results: %v", err)
	}
}

type wrongResults struct{ *fakeShared }

func (w *wrongResults) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	res, err := w.fakeShared.Decide(ctx, req)
	res.Limit++
	return res, err
}
