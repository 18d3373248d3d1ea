package keyfuncs

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestQuery(t *testing.T) {
	long := strings.Repeat("q", 300)
	cases := []struct {
		target  string
		want    string
		wantErr error
	}{
		{"/?account=alice", "query:account:alice", nil},
		{"/?x=1&account=alice&account=bob", "query:account:alice", nil},
		{"/?account=al%20ice", "query:account:al ice", nil},
		{"/?account=a+b", "query:account:a b", nil},
		{"/?acc%6Funt=alice", "query:account:alice", nil},
		{"/?account=%zz&account=bob", "query:account:bob", nil},
		{"/?account=x;y&account=bob", "query:account:bob", nil},
		{"/?account=a%7Cb", "query:account:" + hashed("a|b"), nil},
		{"/?account=a%00b", "query:account:" + hashed("a\x00b"), nil},
		{"/?account=" + long, "query:account:" + hashed(long), nil},
		{"/", "", ErrNoKey},
		{"/?account=", "", ErrNoKey},
		{"/?account", "", ErrNoKey},
		{"/?accounts=alice", "", ErrNoKey},
		{"/?" + strings.Repeat("a=1&", 10_001) + "account=alice", "", ErrBadForm},
		{"/?account=%zz", "", ErrBadForm},
		{"/?ACCOUNT=victim", "", ErrBadForm}, // echo's c.Bind reads it when "account" is missing
		{"/?account=alice&Account=victim", "", ErrBadForm},
	}
	account := Query("account")
	for _, tc := range cases {
		key, err := account(httptest.NewRequest("GET", tc.target, nil))
		if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("Query on %s = %q, %v; want %q, %v", truncate(tc.target, 40), key, err, tc.want, tc.wantErr)
		}
		if err == nil {
			if got := httptest.NewRequest("GET", tc.target, nil).URL.Query().Get("account"); safeValue(got) != strings.TrimPrefix(key, "query:account:") {
				t.Errorf("Query on %s disagrees with URL.Query: %q", tc.target, got)
			}
		}
	}
}
