package redisstore

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// bounded fills only what the caller left zero, keeps everything else, enables
// context deadlines, leaves a Cluster's command retries to go-redis, and does not
// modify the caller's options.
func TestBoundedFillsOnlyZeroFields(t *testing.T) {
	tlsConfig := &tls.Config{ServerName: "redis.internal"}
	o := &redis.UniversalOptions{
		Addrs: []string{"10.0.0.5:26379"}, MasterName: "mymaster", Password: "p", TLSConfig: tlsConfig,
		ReadTimeout: time.Second, DialerRetries: 2, PoolSize: 7,
	}
	c := bounded(o)
	if c.Password != "p" || c.TLSConfig != tlsConfig || c.MasterName != "mymaster" || c.PoolSize != 7 {
		t.Errorf("bounded dropped the caller's settings: %+v", c)
	}
	if c.ReadTimeout != time.Second || c.DialerRetries != 2 {
		t.Errorf("bounded replaced the caller's ReadTimeout %v or DialerRetries %d", c.ReadTimeout, c.DialerRetries)
	}
	if !c.ContextTimeoutEnabled || c.DialTimeout != dialTimeout || c.WriteTimeout != dialIOTimeout ||
		c.PoolTimeout != dialPoolTimeout || c.DialerRetryTimeout != dialRetryBackoff || c.MaxRetries != 1 ||
		c.MinRetryBackoff != dialRetryBackoff || c.MaxRetryBackoff != dialRetryBackoff {
		t.Errorf("bounded left a zero field unbounded: %+v", c)
	}
	if o.ContextTimeoutEnabled || o.DialTimeout != 0 || o.MaxRetries != 0 {
		t.Errorf("bounded modified the caller's options: %+v", o)
	}
	for _, cluster := range []*redis.UniversalOptions{
		{Addrs: []string{"10.0.0.5:6379", "10.0.0.6:6379"}},
		{Addrs: []string{"cfg.example:6379"}, IsClusterMode: true},
	} {
		if c := bounded(cluster); c.MaxRetries != 0 || c.DialerRetries != 1 {
			t.Errorf("Cluster %v: MaxRetries %d (want 0: go-redis's own), DialerRetries %d", cluster.Addrs, c.MaxRetries, c.DialerRetries)
		}
	}
}
