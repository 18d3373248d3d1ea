package httpengine

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Limiter is the framework-agnostic engine behind every adapter: it validates and
// precomputes its configuration once, then decides each request (Start), and
// finishes it after the handler (Ticket.Finish). It is safe for concurrent use.
type Limiter struct {
	store    core.Store
	refunder core.Refunder // the store as a Refunder, or nil
	rules    []rule

	cost       int64
	costFunc   func(*http.Request) (int64, error)
	routeCosts map[string]int64
	errorLog   errorLog
	settle     SettleFunc
	skip       []func(*http.Request) bool
	shadow     bool
	observer   Observer
	fields     Fields
	fallback   *keyFallback

	releaseTimeout time.Duration
	adapter        []any

	policyField   []string   // the RateLimit-Policy value when every policy is static
	secondsFields [][]string // header values "0" to "maxCachedSeconds"
	problemType   []string   // the Content-Type value of problem bodies
	leases        leaseIDs
	tickets       sync.Pool
}

// New validates the configuration and returns a Limiter enforcing limits on store.
// Errors name the offending policy or option.
func New(store core.Store, limits Limits, options ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("httplimit: nil store")
	}
	if len(limits.rules) == 0 {
		return nil, errors.New("httplimit: no policy: build Limits with Limit, LimitFunc or Stack")
	}
	s := settings{fields: IETFFields, releaseTimeout: DefaultReleaseTimeout}
	for _, option := range options {
		if option == nil {
			return nil, errors.New("httplimit: nil option")
		}
		if err := option(&s); err != nil {
			return nil, err
		}
	}
	if s.cost != 0 && s.costFunc != nil {
		return nil, errors.New("httplimit: WithCost and WithCostFunc are exclusive")
	}
	if s.routeCosts != nil && s.costFunc != nil {
		return nil, errors.New("httplimit: WithRouteCosts and WithCostFunc are exclusive")
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	l := &Limiter{
		store:          store,
		rules:          append([]rule(nil), limits.rules...),
		cost:           s.cost,
		costFunc:       s.costFunc,
		routeCosts:     s.routeCosts,
		errorLog:       errorLog{logger: s.logger},
		settle:         s.settle,
		skip:           s.skip,
		shadow:         s.shadow,
		observer:       s.observer,
		fields:         s.fields,
		fallback:       s.fallback,
		releaseTimeout: s.releaseTimeout,
		adapter:        s.adapter,
		leases:         newLeaseIDs(),
	}
	if !s.fallbackSet {
		l.fallback = defaultFallback()
	}
	if s.settle != nil {
		refunder, ok := store.(core.Refunder)
		if !ok {
			return nil, fmt.Errorf("httplimit: WithSettle: the store (%T) cannot refund: it does not implement core.Refunder", store)
		}
		l.refunder = refunder
	} else if refunder, ok := store.(core.Refunder); ok {
		l.refunder = refunder // gives back the slot of a request that stopped waiting
	}
	if err := l.checkRules(); err != nil {
		return nil, err
	}
	if err := l.checkFallback(); err != nil {
		return nil, err
	}
	l.tickets.New = func() any { return newTicket(l, len(l.rules), l.policyField != nil) }
	return l, nil
}

// Must is New for static configuration: it panics on an invalid configuration.
func Must(store core.Store, limits Limits, options ...Option) *Limiter {
	l, err := New(store, limits, options...)
	if err != nil {
		panic(err)
	}
	return l
}

// checkRules validates the rules and precomputes the RateLimit-Policy field of a
// static stack.
func (l *Limiter) checkRules() error {
	static := true
	var buf []byte
	for i := range l.rules {
		ru := &l.rules[i]
		if ru.key == nil {
			if ru.policyFunc != nil {
				return fmt.Errorf("httplimit: policy function %d of the stack has a nil key function", i)
			}
			return fmt.Errorf("httplimit: policy %q has a nil key function", ru.policy.Name())
		}
		if ru.policyFunc != nil {
			static = false
			continue
		}
		p := &ru.policy
		if !p.Valid() {
			return fmt.Errorf("%w: policy %d of the stack is the zero Policy; build policies with core.NewPolicy", core.ErrInvalidPolicy, i)
		}
		for j := range i {
			if q := &l.rules[j]; q.policyFunc == nil && q.policy.Name() == p.Name() {
				return fmt.Errorf("%w %q: appears twice in one stack", core.ErrInvalidPolicy, p.Name())
			}
		}
		if p.Algorithm() == core.Concurrency {
			if l.settle != nil && len(l.rules) == 1 {
				return fmt.Errorf("httplimit: WithSettle: policy %q is a concurrency policy, which has no cost to settle", p.Name())
			}
		} else {
			if l.cost != 0 {
				if err := p.CheckCost(l.cost); err != nil {
					return fmt.Errorf("httplimit: WithCost(%d): %w", l.cost, err)
				}
			}
			for pattern, cost := range l.routeCosts {
				if err := p.CheckCost(cost); err != nil {
					return fmt.Errorf("httplimit: WithRouteCosts: route %q: %w", pattern, err)
				}
			}
		}
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = policyMember(buf, p)
	}
	if static {
		l.policyField = single(string(buf))
	}
	l.secondsFields = secondsFields()
	l.problemType = single(ProblemContentType)
	return nil
}

// AdapterOptions returns the values passed with AdapterOption, in order, for the
// adapter to apply.
func (l *Limiter) AdapterOptions() []any { return l.adapter }

// NeedsPattern reports whether the Limiter reads r.Pattern (WithRouteCosts is
// set), so that an adapter whose router has not routed the request yet (chi's
// r.Use, a net/http middleware around a ServeMux) finds the route first.
func (l *Limiter) NeedsPattern() bool { return l.routeCosts != nil }

// Shadow reports whether the Limiter runs in shadow mode.
func (l *Limiter) Shadow() bool { return l.shadow }
