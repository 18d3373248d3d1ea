package keyfuncs

import (
	"errors"
	"net/url"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestFormUsernameOneBudgetPerAccount is the attack of many spellings of one
// account: Alice, ALICE and aLice, and the NFC and NFD spellings of josé, each
// used to get their own budget.
func TestFormUsernameOneBudgetPerAccount(t *testing.T) {
	fn := FormUsername("username")
	for want, spellings := range map[string][]string{
		"field:username:alice": {"alice", "Alice", "ALICE", "aLice", "ＡＬＩＣＥ"},
		"field:username:josé":  {norm.NFC.String("josé"), norm.NFD.String("josé"), norm.NFD.String("JOSÉ")},
	} {
		for _, s := range spellings {
			r := formRequest("POST", "/login", formType, "username="+url.QueryEscape(s))
			key, err := fn(r)
			if err != nil || key != want {
				t.Errorf("FormUsername(%q) = %q, %v; want %q", s, key, err, want)
			}
		}
	}
}

func TestNormalizeUsername(t *testing.T) {
	for _, names := range [][]string{
		{"alice", "Alice", "ALICE", "ＡＬＩＣＥ"},
		{"josé", norm.NFD.String("josé"), "JOSÉ"},
		{"strasse", "straße", "STRASSE", "STRAẞE"}, // ß and capital ẞ fold to ss
		{"σοφοσ", "σοφος", "ΣΟΦΟΣ"},                // a final sigma folds to a medial one
		{"\uab70", "\u13a0"},                       // Cherokee: folded to capitals, lower-cased again
	} {
		want, err := NormalizeUsername(names[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names[1:] {
			if got, err := NormalizeUsername(name); got != want || err != nil {
				t.Errorf("NormalizeUsername(%q) = %q, %v; want %q, the form of %q", name, got, err, want, names[0])
			}
		}
	}
	for _, bad := range []string{"a b", "a\x00b", "\u200b", "x\u0085"} {
		if got, err := NormalizeUsername(bad); !errors.Is(err, ErrInvalidUsername) {
			t.Errorf("NormalizeUsername(%q) = %q, %v; want ErrInvalidUsername", bad, got, err)
		}
	}
	r := formRequest("POST", "/login", formType, "username=a+b")
	if _, err := FormUsername("username")(r); !errors.Is(err, ErrInvalidUsername) || errors.Is(err, ErrNoKey) {
		t.Fatalf("an invalid username: %v, want ErrInvalidUsername and not ErrNoKey", err)
	}
	r = formRequest("POST", "/login", formType, "password=x")
	if _, err := FormUsername("username")(r); !errors.Is(err, ErrNoKey) {
		t.Fatalf("no username: %v, want ErrNoKey", err)
	}
}

// FuzzNormalizeUsername checks that normalising never panics, is idempotent, and
// that every accepted name yields a key.
func FuzzNormalizeUsername(f *testing.F) {
	for _, s := range []string{"alice", "ALICE", "josé", norm.NFD.String("josé"), "ＡＬＩＣＥ", "a b", "\u0130", "ß", "ΣΟΦΟΣ", "\u13a0\uab70", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		canonical, err := NormalizeUsername(name)
		if err != nil {
			if !errors.Is(err, ErrInvalidUsername) {
				t.Fatalf("NormalizeUsername(%q): %v", name, err)
			}
			return
		}
		again, err := NormalizeUsername(canonical)
		if err != nil || again != canonical {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", name, canonical, again, err)
		}
		r := formRequest("POST", "/login", formType, "username="+url.QueryEscape(name))
		key, err := FormUsername("username")(r)
		if canonical == "" {
			if !errors.Is(err, ErrNoKey) {
				t.Fatalf("FormUsername(%q) = %q, %v; want ErrNoKey for an empty name", name, key, err)
			}
			return
		}
		if err != nil || key != boundKey("field:username:"+safeValue(canonical)) {
			t.Fatalf("FormUsername(%q) = %q, %v; canonical %q", name, key, err, canonical)
		}
		checkKey(t, key)
	})
}
