package keyfuncs

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type ctxKey struct{}

type tenantID struct{ id string }

func (t tenantID) String() string { return "T-" + t.id }

type pointerStringer struct{ name string }

func (p *pointerStringer) String() string { return p.name }

func TestFromContext(t *testing.T) {
	long := strings.Repeat("u", 300)
	cases := []struct {
		name    string
		value   any
		set     bool
		want    string
		wantErr error
		anyErr  bool
	}{
		{"string", "alice", true, "user:alice", nil, false},
		{"stringer", tenantID{"acme"}, true, "user:T-acme", nil, false},
		{"pointer stringer", &pointerStringer{"bob"}, true, "user:bob", nil, false},
		{"int", 42, true, "user:42", nil, false},
		{"int64", int64(-7), true, "user:-7", nil, false},
		{"uint64", uint64(18446744073709551615), true, "user:18446744073709551615", nil, false},
		{"long value hashed", long, true, "user:" + hashed(long), nil, false},
		{"control characters hashed", "al\nice", true, "user:" + hashed("al\nice"), nil, false},
		{"pipe hashed", "a|b", true, "user:" + hashed("a|b"), nil, false},
		{"absent", nil, false, "", ErrNoKey, true},
		{"empty string", "", true, "", ErrNoKey, true},
		{"empty stringer", tenantID{}, true, "user:T-", nil, false},
		{"nil pointer stringer", (*pointerStringer)(nil), true, "", ErrNoKey, true},
		{"unsupported type", 3.5, true, "", nil, true},
		{"struct", struct{}{}, true, "", nil, true},
	}
	user := User(ctxKey{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRequest("203.0.113.9:1")
			if tc.set {
				r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, tc.value))
			}
			key, err := user(r)
			if key != tc.want || (err != nil) != tc.anyErr {
				t.Fatalf("User = %q, %v; want %q (error: %v)", key, err, tc.want, tc.anyErr)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.anyErr && tc.wantErr == nil && errors.Is(err, ErrNoKey) {
				t.Fatalf("a wrong type must not read as ErrNoKey: %v", err)
			}
		})
	}
}

func TestTenantAndKinds(t *testing.T) {
	r := newRequest("203.0.113.9:1")
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, "acme"))
	if key, err := Tenant(ctxKey{})(r); err != nil || key != "tenant:acme" {
		t.Fatalf("Tenant = %q, %v", key, err)
	}
	if key, err := FromContext(ctxKey{}, "org")(r); err != nil || key != "org:acme" {
		t.Fatalf("FromContext org = %q, %v", key, err)
	}
	if key, err := FromContext(ctxKey{}, strings.Repeat("k", 600))(r); err != nil || !strings.HasPrefix(key, hashPrefix) || len(key) > 512 {
		t.Fatalf("an over-long kind was not bounded: %q, %v", truncate(key, 40), err)
	}
}
