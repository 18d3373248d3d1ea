package main

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestTrustInEveryAddressIsWarnedOf(t *testing.T) {
	for _, tt := range []struct {
		trusted string
		warns   int
	}{
		{"10.0.0.0/8, 192.0.2.1, fd00::/8", 0},
		{"0.0.0.0/0", 1},
		{"::/0", 1},
		{"::ffff:0.0.0.0/96", 1}, // IPv4-mapped: every IPv4 address
		{"10.0.0.0/8, 0.0.0.0/0, ::/0", 2},
	} {
		cfg, err := parseFlags([]string{"-trusted-proxies", tt.trusted}, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tt.trusted, err)
		}
		var logs bytes.Buffer
		warnOfTrustInEveryAddress(cfg.trustedProxies, slog.New(slog.NewTextHandler(&logs, nil)))
		if got := strings.Count(logs.String(), "level=WARN"); got != tt.warns {
			t.Errorf("-trusted-proxies %q: %d warnings, want %d:\n%s", tt.trusted, got, tt.warns, logs.String())
		}
	}
}
