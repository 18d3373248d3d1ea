package resilient

import "github.com/go-ratelimit/ratelimit/core"

// A leaky bucket admits a request when its slot starts within the queue's depth
// (burst×period/limit), so an admission can leave the queue up to its cost beyond the
// depth, where Remaining reads 0 whatever the excess. Remaining cannot carry such a
// queue between the shared store and Local mode: seeded from a Remaining of 0, a
// local queue started at the depth and admitted at once what the shared queue, longer
// by the last request's cost, refused (TestOutagesNeverAdmitMoreThanThePolicy). Its
// ResetAfter can: the time until the queue has drained, rounded up to the ms. So a
// leaky bucket's local allowance is seeded, and settled on the return, in queue time.
// With N replicas a local queue of q (N times the emission interval, 1/N of the
// capacity) lasts as long as the shared queue it stands for.

// queueMillis is the time that units of p take in its queue, rounded up.
func queueMillis(p *core.Policy, units int64) int64 {
	return ceilDiv(units*p.PeriodMillis(), p.Limit())
}

// queueUnits is how many units of p a queue of ms holds, rounded up.
func queueUnits(p *core.Policy, ms int64) int64 {
	return ceilDiv(ms*p.Limit(), p.PeriodMillis())
}

// nsToMillis is ns rounded up to ms, 0 for ns <= 0.
func nsToMillis(ns int64) int64 { return ceilDiv(max(0, ns), 1_000_000) }

// seedQueue is how many units of q a new local allowance of a leaky bucket is
// charged at now, so that its queue lasts at least as long as the shared one: the
// queue of the last answer (its reset) and what slow calls admitted since, each
// queued behind the one before (recoveryAfter), less what has drained by now.
func (e *memoEntry) seedQueue(q *core.Policy, now int64) int64 {
	return queueUnits(q, nsToMillis(e.recovered-now))
}

// queueDebt is memo.debt for a leaky bucket, in queue time: the shared store admitted
// req and its queue now drains in res.ResetAfter; the local allowance's queue drains
// at localUntil. When the local queue has no slot within the depth for req, req is
// refused and its charge stands for the local admissions. What brings the shared
// queue up to the local one (with req when it stays admitted) is added to what the
// key owes as slow calls' admissions are (unsettled): a charge cannot lengthen a
// queue already beyond its depth, and what does not land stays owed for the key's
// next admission to charge. Dropped, it let that admission take a slot the local
// queue held. The local queue holds req until the charge lands. Requires the memo's
// lock.
func (e *memoEntry) queueDebt(req *core.Request, res *core.Result, now int64) (refuse bool) {
	p := &req.Policy
	local := nsToMillis(e.localUntil - now)
	refuse = local > p.Window().Milliseconds()
	if !refuse {
		local += queueMillis(p, req.EffectiveCost())
		e.localUntil = now + local*1_000_000
	}
	if shared := res.ResetAfter.Milliseconds(); local > shared {
		e.unsettled += queueUnits(p, local-shared)
	}
	return refuse
}
