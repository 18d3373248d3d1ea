package resilient_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestDecisionsNeverLogAtInfo checks that sampled decision logs are debug records:
// a logger at info level, as slog.Default is, writes none of them, however many
// decisions are refused.
func TestDecisionsNeverLogAtInfo(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		shared := memory.MustNew(memory.WithSweepInterval(0))
		store, err := resilient.New(shared, resilient.WithLogger(logger), resilient.WithDecisionLogEvery(1))
		if err != nil {
			t.Fatal(err)
		}
		p := core.MustPolicy("api", core.FixedWindow, core.PerMinute(1))
		for range 100 {
			if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "ip:203.0.113.9", Cost: 1}); err != nil {
				t.Fatal(err)
			}
		}
		store.Close()
		shared.Close()
		n := strings.Count(buf.String(), "ratelimit: decision")
		switch {
		case level == slog.LevelInfo && n != 0:
			t.Fatalf("an info logger got %d decision lines:\n%s", n, buf.String())
		case level == slog.LevelDebug && n != 100:
			t.Fatalf("a debug logger got %d decision lines, want 100", n)
		}
		if strings.Contains(buf.String(), "203.0.113.9") {
			t.Fatal("a decision log names the client address")
		}
	}
}
