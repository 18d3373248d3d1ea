package keyfuncs

import (
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

func TestHashSecret(t *testing.T) {
	// SHA-256 test vectors (FIPS 180-2), first 32 hex digits.
	cases := []struct{ in, want string }{
		{"abc", "ba7816bf8f01cfea414140de5dae2223"},
		{"", "e3b0c44298fc1c149afbf4c8996fb924"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039"},
	}
	for _, tc := range cases {
		if got := HashSecret(tc.in); got != tc.want {
			t.Errorf("HashSecret(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := hashed("abc"); got != "h:ba7816bf8f01cfea414140de5dae2223" {
		t.Errorf("hashed(abc) = %s", got)
	}
}

func TestSafeValue(t *testing.T) {
	cases := []struct {
		in   string
		keep bool
	}{
		{"alice", true},
		{"Alice Smith", true},
		{"josé", true},
		{"名前", true},
		{"a@example.com", true},
		{strings.Repeat("a", maxValueLength), true},
		{strings.Repeat("a", maxValueLength+1), false},
		{"a\nb", false},
		{"a\rb", false},
		{"a\x00", false},
		{"tab\there", false},
		{"del\x7f", false},
		{"c1\u0085", false},
		{"a|b", false},
		{"h:0123", false},
		{"\xff\xfe", false},
		{"", true},
	}
	for _, tc := range cases {
		got := safeValue(tc.in)
		if tc.keep && got != tc.in {
			t.Errorf("safeValue(%q) = %q, want it unchanged", truncate(tc.in, 20), got)
		}
		if !tc.keep && got != hashed(tc.in) {
			t.Errorf("safeValue(%q) = %q, want its hash", truncate(tc.in, 20), got)
		}
	}
}

func TestBoundKey(t *testing.T) {
	exact := strings.Repeat("k", core.MaxKeyLength)
	if got := boundKey(exact); got != exact {
		t.Fatalf("a key of exactly MaxKeyLength bytes was changed")
	}
	over := exact + "k"
	if got := boundKey(over); got != hashed(over) {
		t.Fatalf("boundKey(over) = %q, want its hash", got)
	}
}
