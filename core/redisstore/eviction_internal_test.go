package redisstore

import (
	"strings"
	"testing"
)

func TestParseEviction(t *testing.T) {
	for _, tc := range []struct {
		name, info string
		maxmemory  int64
		policy     string
		err        string
	}{
		{name: "noeviction", info: "# Memory\r\nused_memory:1000\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\n", policy: "noeviction"},
		{name: "lru", info: "# Memory\r\nmaxmemory:3145728\r\nmaxmemory_policy:allkeys-lru\r\n", maxmemory: 3145728, policy: "allkeys-lru"},
		{name: "no fields", info: "# Memory\r\nused_memory:1000\r\n", err: "no maxmemory"},
		{name: "no policy", info: "maxmemory:0\r\n", err: "no maxmemory"},
		{name: "twice", info: "maxmemory:0\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n", err: "twice"},
		{name: "negative", info: "maxmemory:-1\r\nmaxmemory_policy:noeviction\r\n", err: "not a size"},
		{name: "garbage size", info: "maxmemory:lots\r\nmaxmemory_policy:noeviction\r\n", err: "not a size"},
		{name: "empty policy", info: "maxmemory:0\r\nmaxmemory_policy:\r\n", err: "empty"},
		{name: "empty", info: "", err: "no maxmemory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			maxmemory, policy, err := parseEviction(tc.info)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseEviction: %d %q %v, want an error with %q", maxmemory, policy, err, tc.err)
				}
				return
			}
			if err != nil || maxmemory != tc.maxmemory || policy != tc.policy {
				t.Fatalf("parseEviction: %d %q %v, want %d %q", maxmemory, policy, err, tc.maxmemory, tc.policy)
			}
		})
	}
}

// FuzzParseEviction: any reply of INFO memory is read or refused with an error,
// never a panic, and what is read is a size and a policy.
func FuzzParseEviction(f *testing.F) {
	f.Add("# Memory\r\nmaxmemory:3145728\r\nmaxmemory_policy:allkeys-lru\r\n")
	f.Add("maxmemory:0\nmaxmemory_policy:noeviction")
	f.Fuzz(func(t *testing.T, info string) {
		maxmemory, policy, err := parseEviction(info)
		if err == nil && (maxmemory < 0 || policy == "") {
			t.Fatalf("parseEviction(%q) = %d %q with no error", info, maxmemory, policy)
		}
	})
}
