package main

import (
	"testing"
	"time"
)

// However long the log, the chart keeps at most maxIntervals intervals, and
// merging them loses no request.
func TestIntervalsStayBoundedAndLoseNothing(t *testing.T) {
	spans := []time.Duration{30 * time.Second, 10 * time.Minute, 7 * time.Hour, 40 * 24 * time.Hour, 30 * 365 * 24 * time.Hour}
	for _, span := range spans {
		var iv intervals
		start := int64(1795503600123)
		var admitted, refused int64
		steps := int64(100000)
		for i := int64(0); i <= steps; i++ {
			at := start + span.Milliseconds()*i/steps
			allowed := i%3 != 0
			iv.add(at, allowed)
			if allowed {
				admitted++
			} else {
				refused++
			}
		}
		if len(iv.counts) > maxIntervals {
			t.Errorf("span %v: %d intervals", span, len(iv.counts))
		}
		if len(iv.counts) < maxIntervals/5 && span > maxIntervals*time.Second {
			t.Errorf("span %v: only %d intervals of %v", span, len(iv.counts), intervalWidths[iv.width])
		}
		var a, r int64
		for _, c := range iv.counts {
			a, r = a+c.admitted, r+c.refused
		}
		if a != admitted || r != refused {
			t.Errorf("span %v: counted %d/%d, want %d/%d", span, a, r, admitted, refused)
		}
		if first := iv.start(0); first > start || first+iv.widthMs() <= start {
			t.Errorf("span %v: the first interval starts at %d, not around %d", span, first, start)
		}
	}
}

func TestIntervalWidthsAreMultiplesOfEachOther(t *testing.T) {
	for i := 1; i < len(intervalWidths); i++ {
		if intervalWidths[i]%intervalWidths[i-1] != 0 || intervalWidths[i] <= intervalWidths[i-1] {
			t.Errorf("%v does not follow %v", intervalWidths[i], intervalWidths[i-1])
		}
	}
	// The widest width holds the span of any time the parsers accept (year 9999).
	if last := intervalWidths[len(intervalWidths)-1]; maxIntervals*last.Milliseconds() < 8100*365*24*time.Hour.Milliseconds() {
		t.Errorf("%d intervals of %v cannot span 1970 to 9999", maxIntervals, last)
	}
}

// A request at the epoch and one in year 9999 still give a bounded chart.
func TestIntervalsOverTheWidestSpan(t *testing.T) {
	var iv intervals
	iv.add(0, true)
	iv.add(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).UnixMilli(), false)
	if len(iv.counts) > maxIntervals {
		t.Errorf("%d intervals", len(iv.counts))
	}
}
