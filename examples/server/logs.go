package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/go-ratelimit/ratelimit/core/httplimit"
)

// defaultSummaryInterval is how often the server summarises refusals, errors and
// key fallbacks in one info line.
const defaultSummaryInterval = 10 * time.Second

// logObserver logs what the limiters do without letting a flood become a log
// flood: each decision and error at debug (with the key, a client address or a
// hash; the limiters log each key fallback), and at info only a summary per
// interval, counts per policy and kind, never a key, an address or a username.
// The first error of each kind in an interval is logged at once, at error level
// (warn for a cancelled request).
type logObserver struct {
	logger *slog.Logger

	mu        sync.Mutex
	denied    map[string]int64 // refusals per policy; requires mu
	errs      map[string]int64 // errors per kind; requires mu
	fallbacks map[string]int64 // key fallbacks per "policy/kind"; requires mu

	stop chan struct{}
	done chan struct{}
}

// newLogObserver starts the summary loop; Close stops it and writes the last
// summary. A non-positive interval means defaultSummaryInterval.
func newLogObserver(logger *slog.Logger, interval time.Duration) *logObserver {
	if interval <= 0 {
		interval = defaultSummaryInterval
	}
	o := &logObserver{logger: logger, stop: make(chan struct{}), done: make(chan struct{})}
	o.reset()
	go o.loop(interval)
	return o
}

func (o *logObserver) reset() {
	o.denied, o.errs, o.fallbacks = map[string]int64{}, map[string]int64{}, map[string]int64{}
}

func (o *logObserver) loop(interval time.Duration) {
	defer close(o.done)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-o.stop:
			o.flush(interval)
			return
		case <-ticker.C:
			o.flush(interval)
		}
	}
}

// Close stops the summary loop after a last summary.
func (o *logObserver) Close() {
	close(o.stop)
	<-o.done
}

// OnDecision logs a decision at debug and counts its refusals.
func (o *logObserver) OnDecision(e *httplimit.Event) {
	if !e.Allowed {
		o.mu.Lock()
		for i := range e.Results {
			if e.Verdict(i) == httplimit.VerdictDenied || e.Verdict(i) == httplimit.VerdictShadowDenied {
				o.denied[e.Results[i].Policy]++
			}
		}
		o.mu.Unlock()
	}
	if !o.logger.Enabled(e.Request.Context(), slog.LevelDebug) {
		return
	}
	attrs := make([]any, 0, 4+len(e.Results))
	attrs = append(attrs, "method", e.Request.Method, "path", e.Request.URL.Path, "allowed", e.Allowed)
	for i := range e.Results {
		res := &e.Results[i]
		attrs = append(attrs, slog.Group(res.Policy,
			"key", e.Requests[i].Key,
			"cost", e.Requests[i].EffectiveCost(),
			"result", string(e.Verdict(i)),
			"remaining", res.Remaining,
			"retry_after", res.RetryAfter,
		))
	}
	if e.FellBack {
		attrs = append(attrs, "fell_back", true)
	}
	o.logger.Debug("rate limit decision", attrs...)
}

// OnError logs an undecided request at debug, counts it, and logs the first of
// its kind in the interval at once.
func (o *logObserver) OnError(r *http.Request, err error) {
	kind := errorKind(err)
	o.mu.Lock()
	o.errs[kind]++
	first := o.errs[kind] == 1
	o.mu.Unlock()
	o.logger.Debug("rate limit error", "method", r.Method, "path", r.URL.Path, "kind", kind, "error", err)
	if first {
		level := slog.LevelError
		if kind == "cancelled" || kind == "unidentified" {
			level = slog.LevelWarn
		}
		o.logger.Log(context.Background(), level, "rate limit errors in this interval", "kind", kind, "path", r.URL.Path)
	}
}

// OnKeyFallback counts a request without its identity (the limiter logs each one
// at debug).
func (o *logObserver) OnKeyFallback(_ *http.Request, policy string, kind httplimit.FallbackKind) {
	o.mu.Lock()
	o.fallbacks[policy+"/"+string(kind)]++
	o.mu.Unlock()
}

// errorKind names the kind of a limiter error, for counts and logs.
func errorKind(err error) string {
	switch {
	case errors.Is(err, httplimit.ErrUnidentified):
		return "unidentified"
	case errors.Is(err, httplimit.ErrStore): // a store deadline is a store error
		return "store"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	}
	return "other"
}

// flush writes one info line with the counts since the last one, if any.
func (o *logObserver) flush(interval time.Duration) {
	o.mu.Lock()
	denied, errs, fallbacks := o.denied, o.errs, o.fallbacks
	o.reset()
	o.mu.Unlock()
	if len(denied) == 0 && len(errs) == 0 && len(fallbacks) == 0 {
		return
	}
	o.logger.Info("rate limit summary", "interval", interval,
		countsGroup("denied", denied), countsGroup("errors", errs), countsGroup("key_fallbacks", fallbacks))
}

// countsGroup is a slog group of counts, in name order.
func countsGroup(name string, counts map[string]int64) slog.Attr {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	attrs := make([]any, 0, len(names))
	for _, n := range names {
		attrs = append(attrs, slog.Int64(n, counts[n]))
	}
	return slog.Group(name, attrs...)
}

// observers hands every event to each of its observers, and key fallbacks to
// those that want them.
type observers []httplimit.Observer

func (os observers) OnDecision(e *httplimit.Event) {
	for _, o := range os {
		o.OnDecision(e)
	}
}

func (os observers) OnError(r *http.Request, err error) {
	for _, o := range os {
		o.OnError(r, err)
	}
}

func (os observers) OnKeyFallback(r *http.Request, policy string, kind httplimit.FallbackKind) {
	for _, o := range os {
		if f, ok := o.(httplimit.KeyFallbackObserver); ok {
			f.OnKeyFallback(r, policy, kind)
		}
	}
}
