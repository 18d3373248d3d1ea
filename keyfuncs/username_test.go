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
		"form:username:alice": {"alice", "Alice", "ALICE", "aLice", "ＡＬＩＣＥ"},
		"form:username:josé":  {norm.NFC.String("josé"), norm.NFD.String("josé"), norm.NFD.String("JOSÉ")},
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
