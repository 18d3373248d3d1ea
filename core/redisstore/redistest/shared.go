package redistest

import (
	"errors"
	"os"
	"sync"
	"testing"
)

// Shared starts a standalone server and a Cluster at most once each, on first use, for
// all the tests of a test binary; Close (from TestMain) stops them. Tests that share
// them keep apart by key prefix, or FLUSHALL. Its zero value is ready to use; it is
// safe for concurrent use.
type Shared struct {
	// Masters is the number of Cluster masters (default 3).
	Masters int

	mu         sync.Mutex
	dirs       []string
	server     *Server
	serverErr  error
	cluster    *Cluster
	clusterErr error
}

// Server returns the shared standalone server, starting it on first use. It skips tb
// when redis-server is missing (see Require) and fails it when the server cannot start.
func (sh *Shared) Server(tb testing.TB) *Server {
	tb.Helper()
	path := Require(tb)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.server == nil && sh.serverErr == nil {
		dir, err := sh.tempDir()
		if err == nil {
			sh.server, err = Start(path, dir)
		}
		sh.serverErr = err
	}
	if sh.serverErr != nil {
		tb.Fatal(sh.serverErr)
	}
	return sh.server
}

// Cluster returns the shared Cluster, starting it on first use.
func (sh *Shared) Cluster(tb testing.TB) *Cluster {
	tb.Helper()
	path := Require(tb)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.cluster == nil && sh.clusterErr == nil {
		masters := sh.Masters
		if masters == 0 {
			masters = 3
		}
		dir, err := sh.tempDir()
		if err == nil {
			sh.cluster, err = NewCluster(path, dir, masters)
		}
		sh.clusterErr = err
	}
	if sh.clusterErr != nil {
		tb.Fatal(sh.clusterErr)
	}
	return sh.cluster
}

// tempDir makes a directory that outlives any one test; Close removes it. Requires sh.mu.
func (sh *Shared) tempDir() (string, error) {
	dir, err := os.MkdirTemp("", "redistest-")
	if err == nil {
		sh.dirs = append(sh.dirs, dir)
	}
	return dir, err
}

// Run runs the test binary's tests (m.Run), then Close, and returns m.Run's exit code:
// a TestMain is then os.Exit(servers.Run(m)).
func (sh *Shared) Run(m *testing.M) int {
	code := m.Run()
	sh.Close()
	return code
}

// Close stops the servers started and removes their directories.
func (sh *Shared) Close() error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var errs []error
	if sh.server != nil {
		errs = append(errs, sh.server.Stop())
	}
	if sh.cluster != nil {
		errs = append(errs, sh.cluster.Stop())
	}
	for _, dir := range sh.dirs {
		errs = append(errs, os.RemoveAll(dir))
	}
	sh.server, sh.cluster, sh.dirs = nil, nil, nil
	return errors.Join(errs...)
}
