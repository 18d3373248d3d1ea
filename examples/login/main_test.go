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
}
