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

// Option configures a Limiter: one of httplimit's (httplimit.WithCost, …), or an
// adapter's own, built with AdapterOption or ErrorOption.
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

// SettleFunc settles the cost of a request after its handler returned (see
// httplimit.WithSettle).
type SettleFunc func(r *http.Request, status int, charged int64) int64

// WithCost sets the cost of every request: see httplimit.WithCost.
func WithCost(cost int64) Option {
	return func(s *settings) error {
		if cost < 1 {
			return fmt.Errorf("httplimit: WithCost: cost must be at least 1, got %d", cost)
		}
		s.cost = cost
		return nil
	}
}

// WithCostFunc computes the cost of each request: see httplimit.WithCostFunc.
func WithCostFunc(cost func(*http.Request) (int64, error)) Option {
	return func(s *settings) error {
		if cost == nil {
			return errors.New("httplimit: WithCostFunc: nil function")
		}
		s.costFunc = cost
		return nil
	}
}

// WithRouteCosts sets the cost of requests per route pattern: see
// httplimit.WithRouteCosts.
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

// WithLogger sets where undecided requests are logged: see httplimit.WithLogger.
func WithLogger(logger *slog.Logger) Option {
	return func(s *settings) error {
		if logger == nil {
			return errors.New("httplimit: WithLogger: nil logger")
		}
		s.logger = logger
		return nil
	}
}

// WithSettle settles admitted requests' costs after their handlers: see
// httplimit.WithSettle.
func WithSettle(settle SettleFunc) Option {
	return func(s *settings) error {
		if settle == nil {
			return errors.New("httplimit: WithSettle: nil function")
		}
		s.settle = settle
		return nil
	}
}

// WithSkip exempts the requests for which skip returns true: see
// httplimit.WithSkip.
func WithSkip(skip func(*http.Request) bool) Option {
	return func(s *settings) error {
		if skip == nil {
			return errors.New("httplimit: WithSkip: nil function")
		}
		s.skip = append(s.skip, skip)
		return nil
	}
}

// WithAllowList exempts requests from the given client prefixes; a nil addr is
// PeerAddr: see httplimit.WithAllowList.
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

// WithShadow turns on shadow mode: see httplimit.WithShadow.
func WithShadow() Option {
	return func(s *settings) error {
		s.shadow = true
		return nil
	}
}

// WithObserver attaches an observer to every decision and error: see
// httplimit.WithObserver.
func WithObserver(o Observer) Option {
	return func(s *settings) error {
		if o == nil {
			return errors.New("httplimit: WithObserver: nil observer")
		}
		s.observer = o
		return nil
	}
}

// WithFields chooses the rate-limit header fields: see httplimit.WithFields.
func WithFields(f Fields) Option {
	return func(s *settings) error {
		if f&^(IETFFields|LegacyFields) != 0 {
			return fmt.Errorf("httplimit: WithFields: unknown fields %#x", uint8(f))
		}
		s.fields = f
		return nil
	}
}

// WithKeyFallback chooses what happens to a request without its identity: see
// httplimit.WithKeyFallback.
func WithKeyFallback(f KeyFallback) Option {
	return func(s *settings) error {
		if f == nil {
			f = RefuseFallback()
		}
		s.fallback, s.fallbackSet = f.keyFallback(), true
		return nil
	}
}

// WithReleaseTimeout bounds the store calls made after a request ends (default
// DefaultReleaseTimeout): see httplimit.WithReleaseTimeout.
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
