package keyfuncs

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestInventedAPIKeysShareTheClientsBucket is the attack of 60 invented keys from
// one client: each used to get a fresh bucket (60 keys), and any key skipped the
// client-address limit. With a validator, every invented key is keyed by the
// client's address, the bucket of its requests without a key.
func TestInventedAPIKeysShareTheClientsBucket(t *testing.T) {
	ip := mustClientIP(t, ClientIPConfig{})
	key := FirstOf(ValidAPIKey("X-API-Key", APIKeySet("demo-key", "k2")), ip.Key)
	keys := map[string]int{}
	for i := range 60 {
		k, err := key(newRequest("203.0.113.9:40000", header{"X-API-Key", fmt.Sprintf("guess-%d", i)}))
		if err != nil {
			t.Fatal(err)
		}
		keys[k]++
	}
	if len(keys) != 1 || keys["ip:203.0.113.9"] != 60 {
		t.Fatalf("60 invented keys got %d buckets: %v", len(keys), keys)
	}
	noKey, _ := key(newRequest("203.0.113.9:40001"))
	known, _ := key(newRequest("203.0.113.9:40002", header{"X-API-Key", "demo-key"}))
	if noKey != "ip:203.0.113.9" || known != "ak:"+HashSecret("demo-key") {
		t.Fatalf("no key: %q, known key: %q", noKey, known)
	}
}

func TestValidAPIKey(t *testing.T) {
	down := errors.New("auth backend down")
	valid := func(_ context.Context, key string) (bool, error) {
		switch key {
		case "good":
			return true, nil
		case "boom":
			return false, down
		}
		return false, nil
	}
	fn := ValidAPIKey("X-API-Key", valid)
	cases := []struct {
		name    string
		headers []header
		want    string
		wantErr error
	}{
		{"accepted", []header{{"X-API-Key", " good "}}, "ak:" + HashSecret("good"), nil},
		{"unknown", []header{{"X-API-Key", "guess"}}, "", ErrUnknownAPIKey},
		{"absent", nil, "", ErrNoKey},
		{"blank", []header{{"X-API-Key", "  "}}, "", ErrNoKey},
		{"validator fails", []header{{"X-API-Key", "boom"}}, "", down},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := fn(newRequest("203.0.113.9:1", tc.headers...))
			if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("ValidAPIKey = %q, %v; want %q, %v", key, err, tc.want, tc.wantErr)
			}
		})
	}
	if !errors.Is(ErrUnknownAPIKey, ErrNoKey) {
		t.Fatal("ErrUnknownAPIKey must wrap ErrNoKey so that FirstOf falls back to the address")
	}
	if _, err := fn(newRequest("203.0.113.9:1", header{"X-API-Key", "boom"})); errors.Is(err, ErrNoKey) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a failing validator: %v; want ErrUnavailable (503), never a missing key", err)
	}
}

func TestAPIKeySet(t *testing.T) {
	valid := APIKeySet("a", " b ", "", "  ")
	for key, want := range map[string]bool{"a": true, "b": true, "": false, "  ": false, "c": false, "A": false} {
		if got, err := valid(context.Background(), key); got != want || err != nil {
			t.Errorf("APIKeySet(%q) = %v, %v; want %v", key, got, err, want)
		}
	}
}

func TestAuthenticatedAPIKey(t *testing.T) {
	type ctxKey struct{}
	fn := AuthenticatedAPIKey(ctxKey{})
	r := newRequest("203.0.113.9:1", header{"X-API-Key", "invented"})
	if _, err := fn(r); !errors.Is(err, ErrNoKey) {
		t.Fatalf("unauthenticated request: %v, want ErrNoKey", err)
	}
	authed := r.WithContext(context.WithValue(r.Context(), ctxKey{}, "key-id-7"))
	if key, err := fn(authed); err != nil || key != "ak:"+HashSecret("key-id-7") {
		t.Fatalf("authenticated: %q, %v", key, err)
	}
	wrong := r.WithContext(context.WithValue(r.Context(), ctxKey{}, 3.5))
	if _, err := fn(wrong); err == nil || errors.Is(err, ErrNoKey) {
		t.Fatalf("a float identity: %v, want a programming error", err)
	}
}
