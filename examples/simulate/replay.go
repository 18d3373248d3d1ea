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

// replay decides every request of src at its own time, writes the decisions to
// out and counts them. A log line that cannot be read is counted and skipped, or
// ends the replay when strict. A log line earlier than the line before it is
// decided at that line's time: the virtual clock never runs backwards. When the
// replay stops early, out still holds every decision made, each row whole.
func replay(ctx context.Context, policy core.Policy, store decider, clock *virtualClock, src source, strict bool, out io.Writer, prog *progress) (_ *tally, err error) {
	w := bufio.NewWriter(out)
	defer func() {
		if flushErr := w.Flush(); err == nil {
			err = flushErr
		}
	}()
	w.WriteString("t_ms,key,cost,allowed,remaining,retry_after_ms,delay_ms\n")
	sum := newTally(policy)
	buf := make([]byte, 0, 128)
	for {
		r, err := src.next()
		if errors.Is(err, io.EOF) {
			break
		}
		var bad *badLine
		if errors.As(err, &bad) {
			if strict {
				return sum, fmt.Errorf("%w (-strict)", err)
			}
			sum.bad(bad)
			continue
		}
		if err != nil {
			return sum, err
		}
		if now := clock.ms.Load(); sum.requests > 0 && r.at < now {
			sum.late(now - r.at)
			r.at = now
		}
		clock.set(r.at)
		res, err := store.Decide(ctx, core.Request{Policy: policy, Key: r.key, Cost: r.cost})
		if err != nil {
			return sum, fmt.Errorf("line %d: %w", r.line, err)
		}
		sum.decided(r, res.Allowed)
		buf = appendDecision(buf[:0], r, res)
		if _, err := w.Write(buf); err != nil {
			return sum, err
		}
		if prog != nil {
			prog.line(r.line, r.at)
		}
	}
	return sum, nil
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
