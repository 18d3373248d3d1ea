package httplimit

import (
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// Limits is what a limiter enforces: one policy with the key it limits by, or a
// stack of them decided all-or-nothing. Build it with Limit, LimitFunc and Stack,
// and give it to a router package (nethttp.Middleware, chimw.Middleware, …); the
// zero Limits is refused there.
type Limits = httpengine.Limits

// PolicyFunc picks the policy of one request, for example the limit of the
// caller's tenant plan, so that a plan change takes effect on the next request.
type PolicyFunc = httpengine.PolicyFunc

// Limit enforces policy on the key that key returns: who the request is limited
// as (a user, a hashed API key, a client IP; the keyfuncs package builds them). A
// key function returns an error wrapping keyfuncs.ErrNoKey when the request does
// not carry that identity, and the limiter takes its fallback (WithKeyFallback);
// any other error refuses the request as unidentified (ErrUnidentified). Func
// literals and method values such as clientIP.Key are key functions too.
//
//	httplimit.Limit(api, keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", valid), clientIP.Key))
func Limit(policy core.Policy, key keyfuncs.KeyFunc) Limits {
	return httpengine.Limit(policy, key)
}

// LimitFunc enforces the policy that policy returns for each request on the key
// that key returns. Use it when the limit depends on the request, such as a
// tenant's plan. A failing policy function fails the request (500 by default).
func LimitFunc(policy PolicyFunc, key keyfuncs.KeyFunc) Limits {
	return httpengine.LimitFunc(policy, key)
}

// Stack combines limits into one all-or-nothing decision: the request is admitted
// and charged by every policy when all of them admit it, and charged by none
// otherwise. The policies are reported in the rate-limit fields in the order
// given. A login, say, limited per account, per client address and per subnet:
//
//	httplimit.Stack(
//		httplimit.Limit(perAccount, keyfuncs.FormUsername("username")),
//		httplimit.Limit(perIP, clientIP.Key),
//		httplimit.Limit(perSubnet, subnet),
//	)
func Stack(limits ...Limits) Limits {
	return httpengine.Stack(limits...)
}
