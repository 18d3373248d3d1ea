// Package redistest starts real Redis servers, Clusters and Sentinels for tests: redis-server
// processes on free loopback ports, with their data in temporary directories, stopped
// when the test (or the test binary) ends. Tests of failure modes can pause, kill and
// restart them.
//
// When redis-server is not on PATH, tests that ask for a server are skipped with a
// message, unless the environment variable REDIS_REQUIRED is 1 (CI sets it), in which
// case they fail.
//
//	func TestWithRedis(t *testing.T) {
//		srv := redistest.StartServer(t) // skips without redis-server
//		client := srv.NewClient()
//		defer client.Close()
//		// ... use client; srv stops when t ends
//	}
//
// To start servers once per test binary, keep a Shared in the test package and let
// TestMain close it after the tests:
//
//	var servers redistest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(servers.Run(m)) }
package redistest
