package keyfuncs

import (
	"errors"
	"strings"
	"testing"
)

// TestValidAPIKeyReadsTheHeader checks how ValidAPIKey reads and hashes the
// header: the first line, trimmed, under any spelling of the header name, and
// that the raw secret never shows in the key or an error.
func TestValidAPIKeyReadsTheHeader(t *testing.T) {
	sixKB := strings.Repeat("s3cr3t-", 6<<10/7+1)
	cases := []struct {
		name    string
		headers []header
		want    string
		wantErr error
	}{
		{"accepted", []header{{"X-API-Key", "abc"}}, "ak:ba7816bf8f01cfea414140de5dae2223", nil},
		{"header name is case-insensitive", []header{{"x-api-key", "abc"}}, "ak:ba7816bf8f01cfea414140de5dae2223", nil},
		{"surrounding spaces", []header{{"X-API-Key", "  abc\t"}}, "ak:ba7816bf8f01cfea414140de5dae2223", nil},
		{"first line counts", []header{{"X-API-Key", "abc"}, {"X-API-Key", "other"}}, "ak:ba7816bf8f01cfea414140de5dae2223", nil},
		{"a later valid line does not", []header{{"X-API-Key", "other"}, {"X-API-Key", "abc"}}, "", ErrUnknownAPIKey},
		{"6 kB secret", []header{{"X-API-Key", sixKB}}, "ak:" + HashSecret(sixKB), nil},
		{"control characters", []header{{"X-API-Key", "a\x00b"}}, "ak:" + HashSecret("a\x00b"), nil},
		{"unknown", []header{{"X-API-Key", "abd"}}, "", ErrUnknownAPIKey},
		{"absent", nil, "", ErrNoKey},
		{"empty", []header{{"X-API-Key", ""}}, "", ErrNoKey},
		{"blank", []header{{"X-API-Key", "   "}}, "", ErrNoKey},
		{"another header", []header{{"Authorization", "Bearer abc"}}, "", ErrNoKey},
	}
	apiKey := ValidAPIKey("x-api-KEY", APIKeySet("abc", sixKB, "a\x00b"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := apiKey(newRequest("203.0.113.9:1", tc.headers...))
			if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("ValidAPIKey = %q, %v; want %q, %v", key, err, tc.want, tc.wantErr)
			}
			if err == nil && len(key) != len("ak:")+32 {
				t.Fatalf("key length %d, want %d", len(key), len("ak:")+32)
			}
			for _, h := range tc.headers {
				secret := strings.TrimSpace(h.value)
				if secret != "" && (strings.Contains(key, secret) || (err != nil && strings.Contains(err.Error(), secret))) {
					t.Fatalf("the raw secret leaked into %q / %v", key, err)
				}
			}
		})
	}
}
