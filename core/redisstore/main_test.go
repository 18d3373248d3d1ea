package redisstore_test

import (
	"os"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// servers are the real Redis servers of this test binary, started on first use.
var servers redistest.Shared

func TestMain(m *testing.M) { os.Exit(servers.Run(m)) }
