package httpengine

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// PolicyFunc picks the policy of one request (see httplimit.LimitFunc).
type PolicyFunc func(*http.Request) (core.Policy, error)

// Limits is what a Limiter enforces: one policy with the key it limits by, or a
// stack of them decided all-or-nothing (see httplimit.Limits). Build it with
// Limit, LimitFunc and Stack; the zero Limits is rejected by New.
type Limits struct{ rules []rule }

// rule is one policy of a Limits and the key it is applied to.
type rule struct {
	policy     core.Policy // static policy; zero when policyFunc is set
	policyFunc PolicyFunc
	key        keyfuncs.KeyFunc
}

// Limit enforces policy on the key that key returns (see httplimit.Limit).
func Limit(policy core.Policy, key keyfuncs.KeyFunc) Limits {
	return Limits{rules: []rule{{policy: policy, key: key}}}
}

// LimitFunc enforces the policy that policy returns for each request on the key
// that key returns (see httplimit.LimitFunc).
func LimitFunc(policy PolicyFunc, key keyfuncs.KeyFunc) Limits {
	return Limits{rules: []rule{{policyFunc: policy, key: key}}}
}

// Stack combines limits into one all-or-nothing decision (see httplimit.Stack).
func Stack(limits ...Limits) Limits {
	var all []rule
	for _, l := range limits {
		all = append(all, l.rules...)
	}
	return Limits{rules: all}
}

// Len is the number of policies in the stack.
func (l Limits) Len() int { return len(l.rules) }
