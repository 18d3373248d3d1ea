package transition

import (
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// The zero Policy may reach a store from a configuration that was never built: every
// transition refuses it, or leaves the state as it is, rather than panic.
func TestTransitionsRefuseTheZeroPolicy(t *testing.T) {
	var p core.Policy
	if _, res := Step(State{}, &p, 1000, 1, 0); res.Allowed {
		t.Fatalf("Step admitted under the zero policy: %+v", res)
	}
	if _, res := Peek(State{}, &p, 1000, 1); res.Allowed {
		t.Fatalf("Peek admitted under the zero policy: %+v", res)
	}
	req := core.Request{Policy: p, Key: "k"}
	var st State
	var res core.Result
	StepInPlace(&st, &req, 1000, &res)
	if res.Allowed || st.Seen {
		t.Fatalf("StepInPlace under the zero policy: %+v, state %+v", res, st)
	}
	seen := State{Seen: true, Count: 3}
	if got := Refund(seen, &p, 1000, 1000, 1); got.Count != 3 {
		t.Fatalf("Refund under the zero policy changed the state: %+v", got)
	}
	if got := RecoveredAfter(seen, &p, 1000); got != 0 {
		t.Fatalf("RecoveredAfter under the zero policy: %v", got)
	}
}
