package httpengine

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"time"
)

// Option configures a Limiter. Adapters accept the same options, plus their own
// (their deny and error handlers), which they build with AdapterOption.
type Option func(*settings) error

// settings is the configuration New collects from its options.
type settings struct {
	cost           int64
	costFunc       func(*http.Request) (int64, error)
	routeCosts     map[string]int64
	logger         *slog.Logger
	settle         SettleFunc
	skip           []func(*http.Request) bool
	shadow         bool
	observer       Observer
	fields         Fields
	fallback       *keyFallback
	fallbackSet    bool
	releaseTimeout time.Duration
	adapter        []any
}

// DefaultReleaseTimeout bounds how long releasing a lease or refunding a cost may
// take after a request ends (see WithReleaseTimeout).
const DefaultReleaseTimeout = time.Second

// SettleFunc settles the cost of a request after its handler returned: given the
// response status, it returns what the request really cost, from 0 to the cost it
// was charged. The difference is refunded. For example, charge nothing when the
// handler answered 304 or 5xx because the work was not done.
type SettleFunc func(r *http.Request, status int, charged int64) int64

// WithCost sets the cost of every request (default: each policy's own default
// cost, usually 1). A route that does five times the work of another costs 5. The
// cost applies to the rate policies of the stack; a concurrency policy always takes
// its own cost in slots. New fails when a static policy could never admit it.
func WithCost(cost int64) Option {
	return func(s *settings) error {
		if cost < 1 {
			return fmt.Errorf("httplimit: WithCost: cost must be at least 1, got %d", cost)
		}
		s.cost = cost
		return nil
	}
}

// WithCostFunc computes the cost of each request, for example from the size of a
// batch. A cost the policy can never admit, or an error, fails the request through
// the error handler (a programming error, answered 500 by default).
func WithCostFunc(cost func(*http.Request) (int64, error)) Option {
	return func(s *settings) error {
		if cost == nil {
			return errors.New("httplimit: WithCostFunc: nil function")
		}
		s.costFunc = cost
		return nil
	}
}

// WithRouteCosts sets the cost of requests per route, from one app-wide
// middleware: costs maps a route pattern, exactly as the router names it, to the
// cost of its requests. The pattern is r.Pattern with net/http (such as
// "GET /api/report"), chi's RoutePattern ("/api/report"), gin's FullPath and
// echo's Path; the adapters fill r.Pattern before the decision. Routes that are
// not in the table cost the WithCost cost (default: the policy's own). New fails
// for a cost below 1 or one that a static policy could never admit.
//
//	r.Use(chimw.Middleware(store, httpengine.Limit(api, clientIP.Key),
//		httpengine.WithRouteCosts(map[string]int64{"/api/report": 5})))
func WithRouteCosts(costs map[string]int64) Option {
	return func(s *settings) error {
		if len(costs) == 0 {
			return errors.New("httplimit: WithRouteCosts: empty table")
		}
		for pattern, cost := range costs {
			if cost < 1 {
				return fmt.Errorf("httplimit: WithRouteCosts: route %q: cost must be at least 1, got %d", pattern, cost)
			}
		}
		s.routeCosts = maps.Clone(costs)
		return nil
	}
}

// WithLogger sets where the Limiter logs the requests it could not decide (a
// failing key, policy or cost function, a failing store) at error level, with the
// policy, method and route but never the key; a burst of such errors is logged at
// most once a second, with the number of errors left out. The default is
// slog.Default().
func WithLogger(logger *slog.Logger) Option {
	return func(s *settings) error {
		if logger == nil {
			return errors.New("httplimit: WithLogger: nil logger")
		}
		s.logger = logger
		return nil
	}
}

// WithSettle settles each admitted request's cost after its handler returns and
// refunds the difference. The store must implement core.Refunder: New fails
// otherwise. A handler that panics is not settled: it keeps its whole cost.
func WithSettle(settle SettleFunc) Option {
	return func(s *settings) error {
		if settle == nil {
			return errors.New("httplimit: WithSettle: nil function")
		}
		s.settle = settle
		return nil
	}
}

// WithSkip exempts the requests for which skip returns true: they are neither
// decided nor counted and carry no rate-limit fields. Several skippers combine:
// any of them may exempt a request.
func WithSkip(skip func(*http.Request) bool) Option {
	return func(s *settings) error {
		if skip == nil {
			return errors.New("httplimit: WithSkip: nil function")
		}
		s.skip = append(s.skip, skip)
		return nil
	}
}

// WithAllowList exempts requests whose client address lies in one of prefixes.
// addr resolves the client address; nil means the TCP peer (r.RemoteAddr), which is
// the right choice unless the address comes through trusted proxies, in which case
// pass a keyfuncs.ClientIP's Addr method. A request whose address cannot be
// resolved is not exempt.
func WithAllowList(addr func(*http.Request) (netip.Addr, error), prefixes ...netip.Prefix) Option {
	return func(s *settings) error {
		if len(prefixes) == 0 {
			return errors.New("httplimit: WithAllowList: no prefixes")
		}
		masked := make([]netip.Prefix, len(prefixes))
		for i, p := range prefixes {
			if !p.IsValid() {
				return fmt.Errorf("httplimit: WithAllowList: invalid prefix %v", p)
			}
			masked[i] = unmapPrefix(p)
		}
		if addr == nil {
			addr = PeerAddr
		}
		s.skip = append(s.skip, func(r *http.Request) bool {
			a, err := addr(r)
			if err != nil {
				return false
			}
			a = a.Unmap()
			for _, p := range masked {
				if p.Contains(a) {
					return true
				}
			}
			return false
		})
		return nil
	}
}

// unmapPrefix turns an IPv4-mapped prefix (::ffff:10.0.0.0/104) into its IPv4 form
// (10.0.0.0/8), as client addresses are unmapped before they are compared.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96).Masked()
	}
	return p.Masked()
}

// WithShadow turns on shadow mode: every request is decided, counted and given the
// rate-limit fields, but none is refused or made to wait. Observers see what would
// have been refused (Event.Shadow). Use it to try a policy on live traffic.
func WithShadow() Option {
	return func(s *settings) error {
		s.shadow = true
		return nil
	}
}

// WithObserver attaches an observer (metrics, logs) to every decision and error.
func WithObserver(o Observer) Option {
	return func(s *settings) error {
		if o == nil {
			return errors.New("httplimit: WithObserver: nil observer")
		}
		s.observer = o
		return nil
	}
}

// WithFields chooses which rate-limit header fields responses carry (default
// IETFFields). WithFields(NoFields) sends none; Retry-After is still sent on a refusal.
func WithFields(f Fields) Option {
	return func(s *settings) error {
		if f&^(IETFFields|LegacyFields) != 0 {
			return fmt.Errorf("httplimit: WithFields: unknown fields %#x", uint8(f))
		}
		s.fields = f
		return nil
	}
}

// WithKeyFallback chooses what happens to a request whose key function finds no
// identity (keyfuncs.ErrNoKey, an empty or an oversized key), for example a
// request without a tenant in its context or without the form field:
//
//   - ClientIPFallback(ip): limit it by the client's address (the default, with
//     the TCP peer's address);
//   - RefuseFallback(): refuse it as unidentified (400 by default);
//   - SkipFallback(): do not limit it here (single-policy limiters only).
//
// A key function's other errors are never a missing identity: they always
// refuse the request (ErrUnidentified). Every fallback taken is reported to a
// KeyFallbackObserver, to be counted and logged. WithKeyFallback(nil) is
// RefuseFallback().
func WithKeyFallback(f KeyFallback) Option {
	return func(s *settings) error {
		if f == nil {
			f = RefuseFallback()
		}
		s.fallback, s.fallbackSet = f.keyFallback(), true
		return nil
	}
}

// WithReleaseTimeout bounds the store calls made after a request ends: releasing
// concurrency leases and refunding settled costs (default DefaultReleaseTimeout).
// They run on a context detached from the request's, so a client that went away
// still gives its lease back.
func WithReleaseTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return fmt.Errorf("httplimit: WithReleaseTimeout: need a positive timeout, got %v", d)
		}
		s.releaseTimeout = d
		return nil
	}
}

// AdapterOption carries an adapter's own setting (such as a deny handler in the
// framework's native shape) through the common option list. Adapters read them back
// with Limiter.AdapterOptions; the engine ignores them.
func AdapterOption(v any) Option {
	return func(s *settings) error {
		if v == nil {
			return errors.New("httplimit: AdapterOption: nil value")
		}
		s.adapter = append(s.adapter, v)
		return nil
	}
}

// ErrorOption is an option that makes New fail with err. Adapters return it for an
// invalid argument (a nil handler), so that the error surfaces at construction.
func ErrorOption(err error) Option {
	return func(*settings) error { return err }
}
