package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-ratelimit/ratelimit/core"
)

// summary counts what a replay decided.
type summary struct {
	requests, admitted int
	keys               map[string]struct{}
}

func (s summary) String() string {
	if s.requests == 0 {
		return "0 requests"
	}
	return fmt.Sprintf("%d requests from %d keys: %d admitted (%.1f%%), %d refused",
		s.requests, len(s.keys), s.admitted, 100*float64(s.admitted)/float64(s.requests), s.requests-s.admitted)
}

// replay decides every row of the trace at its own time and writes the decisions.
func replay(ctx context.Context, policy core.Policy, store core.Store, clock *virtualClock, in io.Reader, out io.Writer) (summary, error) {
	trace, err := newTraceReader(in, policy)
	if err != nil {
		return summary{}, err
	}
	w := bufio.NewWriter(out)
	w.WriteString("t_ms,key,cost,allowed,remaining,retry_after_ms,delay_ms\n")
	sum := summary{keys: map[string]struct{}{}}
	buf := make([]byte, 0, 128)
	for {
		r, err := trace.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, err
		}
		clock.set(r.at)
		res, err := store.Decide(ctx, core.Request{Policy: policy, Key: r.key, Cost: r.cost})
		if err != nil {
			return sum, fmt.Errorf("line %d: %w", r.line, err)
		}
		sum.requests++
		sum.keys[r.key] = struct{}{}
		if res.Allowed {
			sum.admitted++
		}
		buf = appendDecision(buf[:0], r, res)
		if _, err := w.Write(buf); err != nil {
			return sum, err
		}
	}
	return sum, w.Flush()
}

// appendDecision formats one output row: t_ms,key,cost,allowed,remaining,retry_after_ms,delay_ms.
func appendDecision(b []byte, r row, res core.Result) []byte {
	b = strconv.AppendInt(b, r.at, 10)
	b = append(b, ',')
	b = appendCSVField(b, r.key)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.cost, 10)
	if res.Allowed {
		b = append(b, ",1,"...)
	} else {
		b = append(b, ",0,"...)
	}
	b = strconv.AppendInt(b, res.Remaining, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, res.RetryAfter.Milliseconds(), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, res.Delay.Milliseconds(), 10)
	return append(b, '\n')
}

// appendCSVField quotes a key that holds a comma, a quote or a line break.
func appendCSVField(b []byte, s string) []byte {
	needs := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			needs = true
			break
		}
	}
	if !needs {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
