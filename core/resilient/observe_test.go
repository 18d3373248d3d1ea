package resilient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

func TestKeyType(t *testing.T) {
	for key, want := range map[string]string{
		"ip:192.0.2.1":                 "ip",
		"ip6:2001:db8::/64":            "ip6",
		"ak:Zm9vYmFy":                  "ak",
		"user:alice":                   "user",
		"form:username:alice":          "form",
		"net4:192.0.2.0/24":            "net4",
		"h:3f2a":                       "h",
		"sk_live_0123456789abcdef":     "other", // no ':': a raw secret stays out
		"Bearer:abc":                   "other", // upper case
		":abc":                         "other",
		"averyveryverylongprefix:abc":  "other",
		"":                             "other",
		"secret token:with:colons":     "other",
		"x-y_z:1":                      "x-y_z",
		"0123456789abcdef:sixteen-max": "0123456789abcdef",
	} {
		if got := resilient.KeyType(key); got != want {
			t.Errorf("KeyType(%q) = %q, want %q", key, got, want)
		}
	}
}

// Decision logs are sampled, name the policy, key type, cost, result and mode, and
// never the key.
func TestDecisionLogsAreSampledAndKeyless(t *testing.T) {
	r := newRig(t, resilient.WithDecisionLogEvery(3))
	for i := 0; i < 9; i++ {
		r.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "ak:c2VjcmV0LWtleQ", Cost: 1})
	}
	log := r.log.String()
	if n := strings.Count(log, "msg=\"ratelimit: decision\""); n != 3 {
		t.Fatalf("%d decision logs of 9 decisions sampled 1 in 3:\n%s", n, log)
	}
	for _, want := range []string{"policy=api", "key_type=ak", "cost=1", "result=allowed", "result=denied", "mode=shared"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "c2VjcmV0") {
		t.Fatalf("the key leaked into the log:\n%s", log)
	}

	quiet := newRig(t, resilient.WithDecisionLogEvery(0))
	quiet.decide(t, perMinute5, "k")
	if strings.Contains(quiet.log.String(), "decision") {
		t.Fatal("decision logs with sampling off")
	}
}

func TestOptionsValidate(t *testing.T) {
	shared := newFakeShared(t, nil)
	for name, option := range map[string]resilient.Option{
		"mode":          resilient.WithMode("sometimes"),
		"policy mode":   resilient.WithPolicyMode("api", ""),
		"empty policy":  resilient.WithPolicyMode("", resilient.Open),
		"deadline":      resilient.WithDeadline(0),
		"long deadline": resilient.WithDeadline(2 * 60e9),
		"breaker":       resilient.WithBreaker(0, 1e9),
		"cooldown":      resilient.WithBreaker(3, 0),
		"in flight":     resilient.WithMaxInFlight(0),
		"replicas":      resilient.WithReplicas(0),
		"degrade":       resilient.WithDegrade(nil),
		"local":         resilient.WithLocalStore(nil),
		"prelimit":      resilient.WithPreLimit(-1),
		"observer":      resilient.WithMonitor(nil),
		"logger":        resilient.WithLogger(nil),
		"log every":     resilient.WithDecisionLogEvery(-1),
		"clock":         resilient.WithClock(nil),
		"store name":    resilient.WithStoreName(""),
		"nil":           nil,
	} {
		if _, err := resilient.New(shared, option); err == nil {
			t.Errorf("%s: New accepted an invalid option", name)
		}
	}
	if _, err := resilient.New(nil); err == nil {
		t.Error("New accepted a nil store")
	}
	for _, s := range []string{"open", "closed", "local"} {
		if m, err := resilient.ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := resilient.ParseMode("fail-open"); err == nil {
		t.Error("ParseMode accepted an unknown mode")
	}
}
