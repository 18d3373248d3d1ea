// Package storetest is the conformance suite every core.Store must pass. It replays
// deterministic random traces through a store and through the pure transitions of
// the algorithms (core/internal/transition) and requires identical results, field
// for field. It also checks stacks, policy isolation, invalid requests and, under -race,
// that concurrent decisions on one key admit exactly what the model admits.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t testing.TB, clock *storetest.Clock) core.Store {
//			s := memory.MustNew(memory.WithClock(clock.Now))
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
package storetest
