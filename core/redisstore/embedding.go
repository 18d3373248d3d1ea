package redisstore

import (
	"fmt"
	"time"
)

// WithExpiryStep declares that the server counts TTLs down in steps of step rather
// than continuously, as an in-process server that its owner fast-forwards does
// (package embedded). Such a server takes a whole step off a key written just before
// a step, so the store adds step to its expiry margin: no key expires before its
// state has recovered. step must be whole milliseconds from 1ms to 24h.
func WithExpiryStep(step time.Duration) Option {
	return func(c *config) error {
		if step < time.Millisecond || step > maxMargin || step%time.Millisecond != 0 {
			return fmt.Errorf("redisstore: WithExpiryStep(%v): want whole milliseconds from 1ms to %v", step, maxMargin)
		}
		c.slack = step
		return nil
	}
}

// WithCloser hands the store a resource to release: Close calls closeFn once, after
// the store's own resources, in the order the closers were given, and returns the
// first error. Use it for what lives as long as the store, such as a client made for
// it alone (New leaves its client open) or an in-process server. When New fails it
// calls no closer: the caller still owns the resources.
func WithCloser(closeFn func() error) Option {
	return func(c *config) error {
		if closeFn == nil {
			return fmt.Errorf("redisstore: WithCloser: nil function")
		}
		c.closers = append(c.closers, closeFn)
		return nil
	}
}
