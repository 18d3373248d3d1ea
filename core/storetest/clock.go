package storetest

import (
	"sync/atomic"
	"time"
)

// Clock is a virtual clock for stores under test. It starts at a fixed instant and
// moves only when told. It is safe for concurrent use.
type Clock struct{ ms atomic.Int64 }

// Start is where every Clock starts: 2026-01-01T00:00:00Z, in milliseconds.
const Start int64 = 1767225600000

// NewClock returns a clock at Start.
func NewClock() *Clock {
	c := &Clock{}
	c.ms.Store(Start)
	return c
}

// Now is the clock's time; pass it to a store as its clock.
func (c *Clock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// Millis is the clock's time in milliseconds since the Unix epoch.
func (c *Clock) Millis() int64 { return c.ms.Load() }

// Set moves the clock to ms (backwards too).
func (c *Clock) Set(ms int64) { c.ms.Store(ms) }

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }
