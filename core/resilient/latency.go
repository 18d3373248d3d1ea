package resilient

import (
	"slices"
	"sync/atomic"
	"time"
)

// latencySamples is how many recent successful calls the adaptive deadline looks at.
const latencySamples = 128

// latencyRefresh recomputes the deadline every this many samples.
const latencyRefresh = 32

// adaptiveDeadline is the deadline of shared-store calls: a multiple of the recent
// p99 latency of successful calls, within [floor, ceiling]. A client whose CPU is
// saturated sees every call take longer, answers included; its deadline grows with
// them, so that a healthy store is not declared dead because its answers wait for a
// CPU. A store that stops answering produces no samples and leaves the deadline
// where the last answers put it, at most ceiling.
type adaptiveDeadline struct {
	floor, ceiling time.Duration
	multiple       int64

	next    atomic.Uint64
	samples [latencySamples]atomic.Int64 // ns; 0: not yet written
	current atomic.Int64                 // ns
}

func newAdaptiveDeadline(floor, ceiling time.Duration, multiple int) *adaptiveDeadline {
	d := &adaptiveDeadline{floor: floor, ceiling: max(floor, ceiling), multiple: int64(multiple)}
	d.current.Store(int64(floor))
	return d
}

// get is the deadline of the next call.
func (d *adaptiveDeadline) get() time.Duration { return time.Duration(d.current.Load()) }

// observe records the latency of a successful call.
func (d *adaptiveDeadline) observe(latency time.Duration) {
	if d.floor == d.ceiling {
		return
	}
	n := d.next.Add(1)
	d.samples[n%latencySamples].Store(max(1, int64(latency)))
	if n%latencyRefresh == 0 {
		d.current.Store(int64(d.compute()))
	}
}

// compute is the deadline from the samples: multiple × p99, within the bounds.
func (d *adaptiveDeadline) compute() time.Duration {
	var buf [latencySamples]int64
	n := 0
	for i := range d.samples {
		if v := d.samples[i].Load(); v > 0 {
			buf[n] = v
			n++
		}
	}
	if n == 0 {
		return d.floor
	}
	s := buf[:n]
	slices.Sort(s)
	p99 := s[(n*99)/100]
	return min(d.ceiling, max(d.floor, time.Duration(p99*d.multiple)))
}
