package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// nilClient is a client that is never called: for tests of construction.
type nilClient struct{ redis.UniversalClient }

func (nilClient) Process(context.Context, redis.Cmder) error { panic("nilClient: unexpected call") }

func TestOptionsValidated(t *testing.T) {
	for name, c := range map[string]struct {
		options []Option
		want    string
	}{
		"PrefixWithBrace":   {[]Option{WithPrefix("rl:{x}")}, "WithPrefix"},
		"PrefixTooLong":     {[]Option{WithPrefix(strings.Repeat("p", 65))}, "WithPrefix"},
		"NilClock":          {[]Option{WithClock(nil)}, "WithClock"},
		"NilHashTag":        {[]Option{WithHashTag(nil)}, "WithHashTag"},
		"MarginZero":        {[]Option{WithExpiryMargin(0)}, "WithExpiryMargin"},
		"MarginTooLong":     {[]Option{WithExpiryMargin(25 * time.Hour)}, "WithExpiryMargin"},
		"MarginFractional":  {[]Option{WithExpiryMargin(1500 * time.Microsecond)}, "WithExpiryMargin"},
		"NilOption":         {[]Option{nil}, "nil option"},
		"SecondOptionFails": {[]Option{WithPrefix("ok:"), WithPrefix("}")}, "WithPrefix"},
	} {
		if _, err := New(nilClient{}, c.options...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %s", name, err, c.want)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

func TestDefaults(t *testing.T) {
	s, err := New(nilClient{})
	if err != nil {
		t.Fatal(err)
	}
	if s.prefix != DefaultPrefix || s.clock != nil || s.margin != any(DefaultServerTimeMargin.Milliseconds()) || s.topology != standalone {
		t.Errorf("defaults: prefix %q clock %v margin %v topology %d", s.prefix, s.clock != nil, s.margin, s.topology)
	}
	s, err = New(nilClient{}, WithClock(time.Now))
	if err != nil {
		t.Fatal(err)
	}
	if s.margin != any(DefaultCallerClockMargin.Milliseconds()) {
		t.Errorf("margin with a caller clock: %vms", s.margin)
	}
	for client, want := range map[redis.UniversalClient]topology{
		redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}):                            cluster,
		redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}):                          ring,
		redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}):                                                     standalone,
		redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}}): standalone,
	} {
		s, err := New(client)
		if err != nil {
			t.Fatal(err)
		}
		if s.topology != want {
			t.Errorf("%T: topology %d, want %d", client, s.topology, want)
		}
		client.Close()
	}
}

func TestCallerClockRange(t *testing.T) {
	s, err := New(nilClient{}, WithClock(func() time.Time { return time.UnixMilli(-5) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.now(); err == nil {
		t.Error("a clock before 1970 was accepted")
	}
}
