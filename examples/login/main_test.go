package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func TestAccountLimitedAfterFiveAttempts(t *testing.T) {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	defer store.Close()
	h, err := newHandler(store)
	if err != nil {
		t.Fatal(err)
	}
	post := func(body, peer string) int {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = peer
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i, want := range []int{401, 401, 401, 401, 200, 429} {
		password := "guess"
		if i >= 4 {
			password = "correct-horse"
		}
		if got := post("username=alice&password="+password, "192.0.2.1:1000"); got != want {
			t.Fatalf("attempt %d: %d, want %d", i+1, got, want)
		}
	}
	if got := post("username=bob&password=correct-horse", "192.0.2.1:1000"); got != 200 {
		t.Fatalf("another account from the same IP: %d, want 200", got)
	}
	// Other spellings of alice share her spent budget; a decoy in the query is refused.
	for _, target := range []string{"username=ALICE&password=correct-horse", "username=Alice&password=correct-horse"} {
		if got := post(target, "192.0.2.2:1000"); got != 429 {
			t.Fatalf("%s: %d, want 429", target, got)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/login?username=decoy", strings.NewReader("username=alice&password=correct-horse"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = "192.0.2.3:1000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("alice with a decoy in the query: %d, want 400", w.Code)
	}
}
