package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/httpengine/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func newStore(t *testing.T) *memory.Store {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	return store
}

// TestBurstThenRefusal: a client gets its burst of 20 at one instant, then 429.
func TestBurstThenRefusal(t *testing.T) {
	adaptertest.BurstThenRefusal(t, newHandler(newStore(t)), "/items/1", 20)
}

// TestLayers: the report costs 5 of "api", and a login is one decision over "api"
// and its stack.
func TestLayers(t *testing.T) { adaptertest.CheckLayeredExample(t, newHandler(newStore(t))) }

// TestTheREADMERefusal: the refused login the README shows after its program is
// what the program answers to a sixth login within a minute, field for field and
// byte for byte in the body (on a clock 22 s into its minute, as the README's
// "login-ip" field shows).
func TestTheREADMERefusal(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, shown, found := strings.Cut(string(readme), "```http\nHTTP/1.1 429 Too Many Requests\n")
	if !found {
		t.Fatal("the README shows no refusal after its program")
	}
	shown, _, _ = strings.Cut(shown, "```")
	header, body, _ := strings.Cut(shown, "\n\n")

	clock := storetest.NewClock()
	clock.Advance(22 * time.Second)
	store := memory.MustNew(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	h := newHandler(store)
	var w *httptest.ResponseRecorder
	for range 6 {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("username=alice&password=wrong"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w = httptest.NewRecorder()
		h.ServeHTTP(w, r)
	}
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("sixth login: %d, want 429", w.Code)
	}
	for _, line := range strings.Split(header, "\n") {
		name, value, _ := strings.Cut(line, ": ")
		if got := w.Header().Get(name); got != value {
			t.Errorf("README shows %s: %s; the program answers %q", name, value, got)
		}
	}
	if got := strings.TrimSpace(w.Body.String()); got != strings.TrimSpace(body) {
		t.Errorf("README shows the body\n%s\nthe program answers\n%s", strings.TrimSpace(body), got)
	}
}
