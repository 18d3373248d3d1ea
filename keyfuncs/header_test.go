package keyfuncs

import (
	"net/http"
	"testing"
)

func TestHeaderNames(t *testing.T) {
	for _, h := range []Header{XForwardedFor, Forwarded, XRealIP} {
		if got := http.CanonicalHeaderKey(h.String()); got != h.canonicalKey() {
			t.Errorf("%v: canonical key %q, want %q", h, h.canonicalKey(), got)
		}
		for _, spelling := range []string{h.String(), " " + h.String() + " ", http.CanonicalHeaderKey(h.String())} {
			if got, err := ParseHeader(spelling); err != nil || got != h {
				t.Errorf("ParseHeader(%q) = %v, %v", spelling, got, err)
			}
		}
	}
	if got := Header(0).String(); got != "Header(0)" {
		t.Errorf("Header(0) = %q", got)
	}
	if h, err := ParseHeader("x-real-ip"); err != nil || h != XRealIP {
		t.Errorf("ParseHeader lowercase = %v, %v", h, err)
	}
	for _, bad := range []string{"", "X-Client-IP", "True-Client-IP"} {
		if _, err := ParseHeader(bad); err == nil {
			t.Errorf("ParseHeader(%q) accepted", bad)
		}
	}
}
