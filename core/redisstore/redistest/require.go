package redistest

import (
	"os"
	"os/exec"
	"testing"
)

// RequiredEnv names the environment variable that turns a missing redis-server from a
// skip into a failure. CI sets it to 1.
const RequiredEnv = "REDIS_REQUIRED"

// Required reports whether the environment demands real Redis servers.
func Required() bool { return os.Getenv(RequiredEnv) == "1" }

// Require returns the path of redis-server. Without one it skips tb, or fails it when
// REDIS_REQUIRED=1.
func Require(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("redis-server")
	if err == nil {
		return path
	}
	unavailable(tb, "redis-server is not on PATH (apt-get install -y redis-server)")
	return ""
}

// unavailable skips tb, or fails it when REDIS_REQUIRED=1.
func unavailable(tb testing.TB, why string) {
	tb.Helper()
	if Required() {
		tb.Fatalf("%s, and %s=1 demands it", why, RequiredEnv)
	}
	tb.Skipf("skipped: %s; set %s=1 to make this a failure", why, RequiredEnv)
}
