package harness

import (
	"testing"
	"time"
)

func TestKeysAreDistinct(t *testing.T) {
	keys, err := Keys(1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1000 || keys[0] == keys[999] {
		t.Fatalf("keys %q .. %q", keys[0], keys[len(keys)-1])
	}
}

func TestKeysUsedCountsTheSpansCovered(t *testing.T) {
	for _, c := range []struct {
		name  string
		spans []span
		keys  int
		want  int
	}{
		{"one short span", []span{{0, 10}}, 100, 10},
		{"overlapping spans", []span{{0, 10}, {5, 10}}, 100, 15},
		{"a span wraps around", []span{{95, 10}}, 100, 10},
		{"more decisions than keys", []span{{50, 1000}}, 100, 100},
		{"two halves", []span{{0, 50}, {50, 50}}, 100, 100},
	} {
		rec := &recorder{spans: c.spans}
		if got := rec.stats(c.keys).KeysUsed; got != c.want {
			t.Errorf("%s: %d keys used, want %d", c.name, got, c.want)
		}
	}
}

func TestOverGrantAgainstTheBound(t *testing.T) {
	o := OverGrant{Admitted: 203, Bound: 200.4, Elapsed: time.Second}
	if o.Over() != 3 || o.Under() != 0 {
		t.Errorf("203 admitted under 200.4: over %d, under %d", o.Over(), o.Under())
	}
	o.Admitted = 180
	if o.Over() != 0 || o.Under() != 20 {
		t.Errorf("180 admitted under 200.4: over %d, under %d", o.Over(), o.Under())
	}
}
