package httpengine

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
)

// scopeKey finds a request's scope in its context.
type scopeKey struct{}

// scope is the part of a request's context that the Limiters it passes through
// share: the tickets holding the request's decisions so far, one of which a
// Limiter nested inside merges with its own rules (see Start), and the values the
// router stores outside the request context (gin's and echo's c.Set), which key
// functions read through Value. One scope is made per request, by the outermost
// Limiter.
type scope struct {
	context.Context
	mu     sync.Mutex   // guards latest, the list, and a merge with one of its tickets
	latest *Ticket      // the request's latest admitted decision not finished yet; Ticket.outer links the earlier ones
	values atomic.Value // a routerValues: the router's own values while a Limiter decides
}

// routerValues holds a RouterValues, nil or not, in an atomic.Value (which holds
// no nil).
type routerValues struct{ RouterValues }

// push records t as the request's latest admitted decision. The decisions form a
// list through Ticket.outer rather than a slice, which keeps the scope, allocated
// once per request, at 48 bytes: a slice made it 80, and a limited request 437
// B/op instead of 405 (go test ./nethttp -bench Middleware -benchmem).
func (s *scope) push(t *Ticket) {
	s.mu.Lock()
	t.outer = s.latest
	s.latest = t
	s.mu.Unlock()
}

// remove forgets t, which is finishing: the scope may outlive the request, and
// the ticket is recycled. It waits for a merge with t in progress
// (Limiter.mergeWithOuter), so t.absorbed is settled when it returns.
func (s *scope) remove(t *Ticket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == t {
		s.latest, t.outer = t.outer, nil
		return
	}
	for inner := s.latest; inner != nil; inner = inner.outer {
		if inner.outer == t {
			inner.outer, t.outer = t.outer, nil
			return
		}
	}
}

// separate appends to dst the request's live decisions, outermost first: those
// admitted, not finished, and not merged into another. Called for a decision not
// pushed yet, they are those it did not merge with (see outerDecision), which
// decided separately. Requires s.mu.
func (s *scope) separate(dst []*Ticket) []*Ticket {
	for t := s.latest; t != nil; t = t.outer {
		if t.disposition == Admitted && !t.absorbed && !t.finished {
			dst = append(dst, t)
		}
	}
	slices.Reverse(dst)
	return dst
}

// giveBackOuter gives back what the request's earlier decisions charged, when a
// Limiter nested inside them fails to decide it for a reason that is not the
// client's (a store that fails, a request that ended): the request is answered
// with an error and never served, so, as with a refusal, it spends nothing of the
// app-wide policies. A client's fault (a body that cannot be parsed) keeps their
// charge. s may be nil.
func (s *scope) giveBackOuter() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := s.latest; t != nil; t = t.outer {
		if t.disposition == Admitted && !t.absorbed && !t.finished {
			t.finished = true // first: t's Finish must not give back again after a panic in giveBack
			t.l.giveBack(t, giveBackAll, 0)
			t.allowed = false // its observers see the request uncharged, as a refusal's others (refuseSeparate)
		}
	}
}

// refuseSeparate gives back what others, the request's decisions that a refusing
// Limiter did not merge with (on other stores, or in shadow mode), charged: as
// with a merged decision, a refused request spends nothing. Their results then
// show what they have left, uncharged, for the fields the refusal writes, and
// their observers see the request uncharged, and what failed to be given back,
// when each finishes. Requires the scope's lock.
func refuseSeparate(others []*Ticket) {
	for _, o := range others {
		if !o.allowed {
			continue // a refusal in shadow mode charged nothing
		}
		o.finished = true // o's Finish gives back nothing more
		var rc releaseContext
		for i := range o.results {
			o.l.uncharge(rc.of(o.r, o.l.releaseTimeout), o, &o.reqs[i], &o.results[i], o.partsOf(i))
			o.results[i].Allowed, o.results[i].Delay = false, 0
		}
		rc.end()
		o.allowed = false
	}
}

// Value returns the scope itself for scopeKey, then the router's value for a key
// it holds, then the parent context's value.
func (s *scope) Value(key any) any {
	if _, ok := key.(scopeKey); ok {
		return s
	}
	if values, _ := s.values.Load().(routerValues); values.RouterValues != nil {
		if v, ok := values.Get(key); ok {
			return v
		}
	}
	return s.Context.Value(key)
}

// scopeOf returns r's scope, or nil.
func scopeOf(r *http.Request) *scope {
	s, _ := r.Context().Value(scopeKey{}).(*scope)
	return s
}

// RouterValues are the values a router stores for a request outside its context,
// such as gin's and echo's c.Set. *gin.Context implements it.
type RouterValues interface {
	// Get returns the value stored under key, and whether there is one.
	Get(key any) (value any, ok bool)
}

// WithRouterValues returns r with a context whose Value also finds the router's
// values while a Limiter decides: values is asked for every key before the
// context's own values, so keyfuncs.Tenant("tenant") reads c.Set("tenant", …).
// Adapters call it before Limiter.Start, which unbinds the values once it has the
// request's keys: gin and echo reuse their per-request objects, and the request's
// context, which may outlive it (a goroutine, an audit log), must never answer
// with a later request's values. A request that already passed through a Limiter
// keeps its scope, which is returned rebound.
func WithRouterValues(r *http.Request, values RouterValues) *http.Request {
	if s := scopeOf(r); s != nil {
		s.values.Store(routerValues{values})
		return r
	}
	s := &scope{Context: r.Context()}
	s.values.Store(routerValues{values})
	return r.WithContext(s)
}

// unbindValues forgets the router's values (see WithRouterValues). s may be nil.
func (s *scope) unbindValues() {
	if s != nil {
		s.values.Store(routerValues{})
	}
}
