package resilient_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// buggyMonitor is a Monitor with a bug: every method panics.
type buggyMonitor struct{ calls atomic.Int64 }

func (m *buggyMonitor) OnDecision(*resilient.DecisionEvent) { m.calls.Add(1); panic("metrics bug") }
func (m *buggyMonitor) OnStoreCall(*resilient.StoreCallEvent) {
	m.calls.Add(1)
	panic("metrics bug")
}
func (m *buggyMonitor) OnFallback(*resilient.FallbackEvent) { m.calls.Add(1); panic("metrics bug") }
func (m *buggyMonitor) OnLocalRefusal(*resilient.LocalRefusalEvent) {
	m.calls.Add(1)
	panic("metrics bug")
}

// A Monitor that panics changes nothing that is decided: not the answers, not the
// fallback and its settlement, not the recovery. Its panics on the prober's goroutine
// (the calls of the confirming and recovery probes, the end of the fallback) would
// otherwise crash the process, at the worst moment: during an outage, on every
// instance at once. Each panic is logged at error, at most once a second.
func TestPanickingMonitorChangesNothing(t *testing.T) {
	buggy := &buggyMonitor{}
	r := newRig(t, resilient.WithMonitor(buggy))
	continueFromTheLastSharedAnswer(t, r)
	// The prober tells the Monitors of the return after the fallback has ended.
	waitFor(t, "the return reported", func() bool { return len(r.rec.transitions()) >= 2 })
	if got := r.rec.transitions(); len(got) != 2 || got[0] != "api>local" || got[1] != "api>shared" {
		t.Fatalf("the other Monitor saw transitions %v, want api>local then api>shared", got)
	}
	if buggy.calls.Load() < 10 {
		t.Fatalf("the buggy Monitor was called %d times: the test did not exercise it", buggy.calls.Load())
	}
	log := r.log.String()
	lines := strings.Count(log, `level=ERROR msg="ratelimit: a Monitor panicked`)
	if lines < 1 || !strings.Contains(log, "metrics bug") || !strings.Contains(log, "monitorpanic_test.go") {
		t.Fatalf("the panics are not logged at error with their value and stack:\n%s", log)
	}
	if int64(lines) >= buggy.calls.Load() {
		t.Fatalf("%d panics logged for %d calls: want at most one a second", lines, buggy.calls.Load())
	}
}
