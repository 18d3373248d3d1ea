package httpengine

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
)

// KeyFunc says who a request is limited as: a user, a hashed API key, a client IP.
// It returns an error wrapping keyfuncs.ErrNoKey when the request does not carry
// that identity; the Limiter then takes its fallback (see WithKeyFallback: the
// client's address by default). Any other error refuses the request as
// unidentified. The keyfuncs package provides the common ones; its KeyFunc type
// converts to this one implicitly.
type KeyFunc = func(*http.Request) (string, error)

// PolicyFunc picks the policy of one request, for example the limit of the caller's
// tenant plan, so that a plan change takes effect on the next request.
type PolicyFunc func(*http.Request) (core.Policy, error)

// Limits is what a Limiter enforces: one policy with the key it limits by, or a
// stack of them decided all-or-nothing. Build it with Limit, LimitFunc and Stack;
// the zero Limits is rejected by New.
type Limits struct{ rules []rule }

// rule is one policy of a Limits and the key it is applied to.
type rule struct {
	policy     core.Policy // static policy; zero when policyFunc is set
	policyFunc PolicyFunc
	key        KeyFunc
}

// Limit enforces policy on the key that key returns.
//
//	httpengine.Limit(api, keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", valid), ip.Key))
func Limit(policy core.Policy, key KeyFunc) Limits {
	return Limits{rules: []rule{{policy: policy, key: key}}}
}

// LimitFunc enforces the policy that policy returns for each request on the key that
// key returns. Use it when the limit depends on the request, such as a tenant's plan.
func LimitFunc(policy PolicyFunc, key KeyFunc) Limits {
	return Limits{rules: []rule{{policyFunc: policy, key: key}}}
}

// Stack combines limits into one all-or-nothing decision: the request is admitted
// and charged by every policy when all of them admit it, and charged by none
// otherwise. The policies are reported in the rate-limit fields in the order given.
//
//	httpengine.Stack(
//		httpengine.Limit(perAccount, keyfuncs.FormField("username")),
//		httpengine.Limit(perIP, clientIP.Key),
//	)
func Stack(limits ...Limits) Limits {
	var all []rule
	for _, l := range limits {
		all = append(all, l.rules...)
	}
	return Limits{rules: all}
}

// Len is the number of policies in the stack.
func (l Limits) Len() int { return len(l.rules) }
