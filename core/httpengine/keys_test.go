package httpengine_test

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestMissingIdentityFallsBackToThePeer(t *testing.T) {
	store, _ := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	obs := &recorder{}
	l := httpengine.Must(store, httpengine.Limit(one, headerKey), httpengine.WithObserver(obs))

	huge := strings.Repeat("k", core.MaxKeyLength) // "k:" + 512 bytes: too long
	for _, r := range []*http.Request{
		request("[2001:db8:1:2::7]:443"),
		request("[2001:db8:1:2:ffff::9]:443", "X-Key", huge), // same /64, oversized key
		request("[::ffff:198.51.100.7]:80"),
		request("198.51.100.7:81", "X-Key", huge),
		request("@"), // a Unix socket: no address at all
		request(""),
	} {
		if w := serve(l, r, ok); w.Code >= 500 {
			t.Fatalf("%q: status %d", r.RemoteAddr, w.Code)
		}
	}
	wantKeys := []string{"ip6:2001:db8:1:2::/64", "ip6:2001:db8:1:2::/64", "ip:198.51.100.7", "ip:198.51.100.7", httpengine.UnknownPeerKey, httpengine.UnknownPeerKey}
	wantVerdicts := []httpengine.Verdict{"allowed", "denied", "allowed", "denied", "allowed", "denied"}
	for i := range wantKeys {
		if obs.keys[i][0] != wantKeys[i] || obs.verdicts[i][0] != wantVerdicts[i] || !obs.fellBack[i] {
			t.Errorf("request %d: key %q %s fellBack=%v; want %q %s true", i, obs.keys[i][0], obs.verdicts[i][0], obs.fellBack[i], wantKeys[i], wantVerdicts[i])
		}
	}
}

func TestRefuseWithoutIdentity(t *testing.T) {
	store, _ := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	obs := &recorder{}
	l := httpengine.Must(store, httpengine.Limit(one, headerKey), httpengine.WithKeyFallback(nil), httpengine.WithObserver(obs))
	w := serve(l, request("192.0.2.1:1"), ok)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", w.Code)
	}
	if len(obs.errs) != 1 || !errors.Is(obs.errs[0], httpengine.ErrUnidentified) {
		t.Fatalf("observer errors %v, want one wrapping ErrUnidentified", obs.errs)
	}
	if body := w.Body.String(); strings.Contains(body, "X-Key") {
		t.Errorf("the body leaks the error: %s", body)
	}
}

func TestKeyFunctionFailureIsNotSkipped(t *testing.T) {
	store, _ := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	broken := func(*http.Request) (string, error) { return "", errors.New("session store down") }
	l := httpengine.Must(store, httpengine.Limit(one, broken))
	if w := serve(l, request("192.0.2.1:1"), ok); w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400: a broken key function must not let requests through unlimited", w.Code)
	}
}
