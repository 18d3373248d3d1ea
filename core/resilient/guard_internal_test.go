package resilient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A call that answers is never reported as timed out, however its goroutine and the
// caller interleave with the end of its context.
func TestGuardAnswersAreNeverTimeouts(t *testing.T) {
	g := newGuard(time.Hour, 1)
	errAnswer := errors.New("answer")
	for i := 0; i < 5000; i++ {
		want := error(nil)
		if i%2 == 1 {
			want = errAnswer
		}
		err, timedOut := g.run(context.Background(), 0, func(context.Context) error { return want })
		if timedOut || err != want {
			t.Fatalf("call %d: %v timedOut=%v", i, err, timedOut)
		}
	}
	g.stop()
	g.wait()
	if err, _ := g.run(context.Background(), 0, func(context.Context) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("after stop: %v", err)
	}
}

// The caller returns at the deadline; the call goes on until it returns, and holds its
// in-flight slot until then.
func TestGuardReturnsAtTheDeadline(t *testing.T) {
	g := newGuard(10*time.Millisecond, 1)
	release := make(chan struct{})
	start := time.Now()
	err, timedOut := g.run(context.Background(), 0, func(context.Context) error { <-release; return nil })
	if !timedOut || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("%v timedOut=%v after %v", err, timedOut, time.Since(start))
	}
	if err, _ := g.run(context.Background(), 0, func(context.Context) error { return nil }); !errors.Is(err, ErrOverload) {
		t.Fatalf("a second call with the slot held: %v", err)
	}
	close(release)
	g.stop()
	g.wait()
	if n := g.inFlight.Load(); n != 0 {
		t.Fatalf("%d calls in flight after wait", n)
	}
}

// A store that panics fails the call with an error instead of ending the process.
func TestGuardRecoversPanics(t *testing.T) {
	g := newGuard(time.Second, 10)
	err, timedOut := g.run(context.Background(), 0, func(context.Context) error { panic("boom") })
	if err == nil || timedOut || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("%v timedOut=%v", err, timedOut)
	}
	if o, kind := classify(context.Background(), err, false); o != broken || kind != KindPermanent {
		t.Fatalf("a panic classifies as %v %v, want permanent", o, kind)
	}
	g.stop()
	g.wait()
}
