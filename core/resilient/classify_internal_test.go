package resilient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

func TestClassify(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	ioTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		err      error
		timedOut bool
		want     outcome
		kind     ErrorKind
	}{
		{"answer", live, nil, false, succeeded, ""},
		{"deadline", live, context.DeadlineExceeded, true, failed, KindTimeout},
		{"store saw the deadline", live, fmt.Errorf("redisstore: %w", context.DeadlineExceeded), false, failed, KindTimeout},
		{"read timeout", live, ioTimeout, false, failed, KindTimeout},
		{"connection refused", live, refused, false, failed, KindUnavailable},
		{"wrapped unavailable", live, fmt.Errorf("x: %w: LOADING", core.ErrStoreUnavailable), false, failed, KindUnavailable},
		{"eof", live, io.EOF, false, failed, KindUnavailable},
		{"overload", live, ErrOverload, false, failed, KindOverload},
		{"client cancelled", gone, context.Canceled, true, canceled, ""},
		{"client cancelled, store error", gone, refused, false, canceled, ""},
		{"wrong type", live, errors.New("WRONGTYPE Operation against a key"), false, broken, KindPermanent},
		{"unknown command", live, errors.New("ERR unknown command 'evalsha'"), false, broken, KindPermanent},
	} {
		o, kind := classify(tt.ctx, tt.err, tt.timedOut)
		if o != tt.want || kind != tt.kind {
			t.Errorf("%s: %v %q, want %v %q", tt.name, o, kind, tt.want, tt.kind)
		}
	}
}
