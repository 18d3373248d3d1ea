// Package reference transcribes the project's definitions of the rate algorithms
// literally, in exact rational arithmetic (math/big.Rat), with none of the integer
// scaling that the transitions (core/internal/transition) use. It is slow and
// exists for tests: the transitions, the stores and the simulator are all checked
// against it decision for decision.
//
//	model := reference.New(policy)
//	d := model.Decide(tMillis, cost) // d.Allowed, d.Remaining, d.RetryAfterMs, d.DelayMs
package reference
