package nethttp

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The settled status is the first final one: 1xx responses are informational, but
// for 101, which switches protocols (it was settled as 200).
func TestStatusWriterRecordsTheFinalStatus(t *testing.T) {
	for _, c := range []struct {
		codes []int
		want  int
	}{
		{[]int{http.StatusEarlyHints, http.StatusNoContent}, http.StatusNoContent},
		{[]int{http.StatusSwitchingProtocols}, http.StatusSwitchingProtocols},
		{nil, http.StatusOK},
	} {
		w := &statusWriter{ResponseWriter: httptest.NewRecorder()}
		for _, code := range c.codes {
			w.WriteHeader(code)
		}
		if got := w.Status(); got != c.want {
			t.Errorf("after %v: status %d, want %d", c.codes, got, c.want)
		}
	}
}
