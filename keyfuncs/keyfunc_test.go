package keyfuncs

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// fixed returns a KeyFunc that always returns key and err.
func fixed(key string, err error) KeyFunc {
	return func(*http.Request) (string, error) { return key, err }
}

var errBroken = errors.New("broken")

func TestConst(t *testing.T) {
	long := strings.Repeat("x", 600)
	cases := []struct{ in, want string }{
		{"global", "global"},
		{"login page", "login page"},
		{"a|b", hashed("a|b")},
		{"h:abc", hashed("h:abc")},
		{long, hashed(long)},
	}
	for _, tc := range cases {
		key, err := Const(tc.in)(newRequest("203.0.113.9:1"))
		if err != nil || key != tc.want {
			t.Errorf("Const(%q) = %q, %v; want %q", truncate(tc.in, 20), key, err, tc.want)
		}
	}
}

func TestConstructorsPanicOnProgrammingErrors(t *testing.T) {
	cases := map[string]func(){
		"Const empty":             func() { Const("") },
		"ValidAPIKey empty":       func() { ValidAPIKey("", APIKeySet("a")) },
		"ValidAPIKey nil":         func() { ValidAPIKey("X-API-Key", nil) },
		"AuthenticatedAPIKey nil": func() { AuthenticatedAPIKey(nil) },
		"Query empty":             func() { Query("") },
		"FormField empty":         func() { FormField("") },
		"FromContext nil key":     func() { FromContext(nil, "user") },
		"FromContext no kind":     func() { FromContext(ctxKey{}, "") },
		"RoutePattern nil":        func() { RoutePattern(nil) },
		"Join none":               func() { Join() },
		"Join nil":                func() { Join(Const("a"), nil) },
		"FirstOf nil":             func() { FirstOf(nil) },
	}
	for name, construct := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.HasPrefix(msg, "keyfuncs: ") {
					t.Fatalf("recovered %v, want a keyfuncs panic", r)
				}
			}()
			construct()
		})
	}
}

func TestFirstOf(t *testing.T) {
	cases := []struct {
		name    string
		fns     []KeyFunc
		want    string
		wantErr error
	}{
		{"first present", []KeyFunc{fixed("a", nil), fixed("b", nil)}, "a", nil},
		{"skips ErrNoKey", []KeyFunc{fixed("", ErrNoKey), fixed("b", nil)}, "b", nil},
		{"skips wrapped ErrNoKey", []KeyFunc{ValidAPIKey("X-API-Key", APIKeySet("a")), fixed("b", nil)}, "b", nil},
		{"stops at another error", []KeyFunc{fixed("", errBroken), fixed("b", nil)}, "", errBroken},
		{"stops at ErrUnidentifiedClient", []KeyFunc{fixed("", ErrUnidentifiedClient), fixed("b", nil)}, "", ErrUnidentifiedClient},
		{"none present", []KeyFunc{fixed("", ErrNoKey), fixed("", ErrNoKey)}, "", ErrNoKey},
		{"no functions", nil, "", ErrNoKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := FirstOf(tc.fns...)(newRequest("203.0.113.9:1"))
			if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("FirstOf = %q, %v; want %q, %v", key, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestFirstOfCopiesItsArguments(t *testing.T) {
	fns := []KeyFunc{fixed("a", nil)}
	first := FirstOf(fns...)
	fns[0] = fixed("b", nil)
	if key, _ := first(newRequest("203.0.113.9:1")); key != "a" {
		t.Fatalf("FirstOf followed a change to the caller's slice: %q", key)
	}
}

func TestJoin(t *testing.T) {
	long := strings.Repeat("k", 300)
	cases := []struct {
		name    string
		fns     []KeyFunc
		want    string
		wantErr error
	}{
		{"one", []KeyFunc{fixed("a", nil)}, "a", nil},
		{"several", []KeyFunc{fixed("user:alice", nil), Const("x"), fixed("route:GET /", nil)}, "user:alice|x|route:GET /", nil},
		{"missing part", []KeyFunc{fixed("a", nil), fixed("", ErrNoKey)}, "", ErrNoKey},
		{"broken part", []KeyFunc{fixed("a", nil), fixed("", errBroken)}, "", errBroken},
		{"empty part", []KeyFunc{fixed("a", nil), fixed("", nil)}, "", ErrNoKey},
		{"too long: hashed", []KeyFunc{fixed(long, nil), fixed(long, nil)}, hashed(long + "|" + long), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := Join(tc.fns...)(newRequest("203.0.113.9:1"))
			if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Join = %q, %v; want %q, %v", key, err, tc.want, tc.wantErr)
			}
			if err == nil && (len(key) == 0 || len(key) > core.MaxKeyLength) {
				t.Fatalf("Join key length %d", len(key))
			}
		})
	}
}
