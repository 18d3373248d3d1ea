package reserve

import "sync/atomic"

// Stats counts what a Store has done with its backing store since New. Local
// decisions are not counted one by one (that would add shared writes to the path
// leasing exists to make cheap): they spent Leased − Returned − Held, less the
// units of failed returns (ReturnFailures counts those returns, not their units).
type Stats struct {
	// Leases is how many leases were taken from the backing store.
	Leases int64
	// Leased is how many units of budget those leases took.
	Leased int64
	// Returned is how many unspent units were given back to the backing store.
	Returned int64
	// ReturnFailures is how many returns failed; their units are lost to their keys.
	ReturnFailures int64
	// Held is how many units the Store holds unspent right now.
	Held int64
	// Keys is how many (policy, key) entries the Store keeps.
	Keys int64
}

type counters struct {
	leases, leased, returned, returnFailures atomic.Int64
}

// Stats reports the Store's counters. Held is summed over the entries without
// stopping them, so under concurrent decisions it is a moment's approximation.
func (s *Store) Stats() Stats {
	st := Stats{
		Leases:         s.stats.leases.Load(),
		Leased:         s.stats.leased.Load(),
		Returned:       s.stats.returned.Load(),
		ReturnFailures: s.stats.returnFailures.Load(),
		Keys:           s.keys.Load(),
	}
	var entries []keyed
	for _, t := range s.tables {
		entries = t.snapshot(entries[:0])
		for _, k := range entries {
			st.Held += k.entry.balance.Load()
		}
	}
	return st
}
