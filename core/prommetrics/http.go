package prommetrics

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// The result label values of ratelimit_decisions_total. The first five come from
// the HTTP layer (HTTPObserver) and are httplimit's verdicts; the last two from a
// resilient store, for requests its failure mode did not decide.
const (
	ResultAllowed      = string(httplimit.VerdictAllowed)      // admitted and charged
	ResultDenied       = string(httplimit.VerdictDenied)       // refused by this policy
	ResultShadowDenied = string(httplimit.VerdictShadowDenied) // would have been refused; shadow mode let it through
	ResultUncharged    = string(httplimit.VerdictUncharged)    // admitted by this policy, refused by another of its stack
	ResultUnenforced   = string(httplimit.VerdictUnenforced)   // admitted uncounted by the open failure mode
	ResultUnavailable  = string(resilient.OutcomeUnavailable)  // refused by the closed failure mode (503)
	ResultError        = string(resilient.OutcomeError)        // the store failed permanently
)

// HTTPObserver returns the httplimit.Observer that counts every HTTP decision, on
// any store, in ratelimit_decisions_total{policy,result} (one count per policy of
// the decision, also for a policy charged under two keys), the requests whose key
// function found no identity in ratelimit_key_fallbacks_total{policy,kind}, and
// the requests that could not be decided in ratelimit_errors_total{reason}. Attach
// it to every Limiter:
//
//	httplimit.WithObserver(metrics.HTTPObserver())
//
// Once it is in use, a resilient store observed by the same Metrics counts only
// the decisions the HTTP layer cannot see as such (results unavailable and
// error), so that no decision is counted twice.
func (m *Metrics) HTTPObserver() httplimit.Observer {
	m.httpDecisions.Store(true)
	return httpObserver{m}
}

// httpObserver is Metrics seen as an httplimit.Observer.
type httpObserver struct{ m *Metrics }

// OnDecision counts each policy's verdict, once per request: a policy a merged
// decision charges under two keys counts as the bucket the RateLimit field shows
// (Event.Shown).
func (o httpObserver) OnDecision(e *httplimit.Event) {
	if o.m.decisions != nil {
		for i := range e.Results {
			if k := e.Shown(i); k >= 0 {
				o.m.decisions.WithLabelValues(e.Results[k].Policy, string(e.Verdict(k))).Inc()
			}
		}
	}
}

// OnKeyFallback counts a request whose key function found no identity, by the
// fallback the Limiter took (httplimit.KeyFallbackObserver).
func (o httpObserver) OnKeyFallback(_ *http.Request, policy string, kind httplimit.FallbackKind) {
	o.m.keyFallbacks.WithLabelValues(policy, string(kind)).Inc()
}

// OnError counts a request that could not be decided, by httplimit.ErrorReason.
func (o httpObserver) OnError(_ *http.Request, err error) {
	o.m.errors.WithLabelValues(httplimit.ErrorReason(err)).Inc()
}

// countedByHTTP reports whether the HTTP layer counts outcome, so that the
// resilient store's observer leaves it out.
func (m *Metrics) countedByHTTP(outcome resilient.Outcome) bool {
	return m.httpDecisions.Load() && outcome != resilient.OutcomeUnavailable && outcome != resilient.OutcomeError
}
