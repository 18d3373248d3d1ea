package main

import "time"

// maxIntervals bounds the bars of the report's chart, and so the memory its
// counts take, whatever the log's length.
const maxIntervals = 240

// intervalWidths are the widths an interval may take, each a multiple of the one
// before, so that intervals merge whole into wider ones.
var intervalWidths = []time.Duration{
	time.Second, 2 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 7 * 24 * time.Hour, 28 * 24 * time.Hour, 112 * 24 * time.Hour,
	448 * 24 * time.Hour, 1792 * 24 * time.Hour, 7168 * 24 * time.Hour, 28672 * 24 * time.Hour, // 240 of the last span year 9999
}

// intervalCount is what was decided in one interval.
type intervalCount struct {
	admitted, refused int64
}

// intervals counts admitted and refused requests per interval of time, keeping
// at most maxIntervals of them: when the log's span outgrows them, the width
// steps up and neighbours merge. Intervals start at multiples of their width
// after the Unix epoch. Times must not decrease.
type intervals struct {
	width  int   // index into intervalWidths
	first  int64 // index of counts[0]: it starts at first*width ms
	counts []intervalCount
}

func (iv *intervals) widthMs() int64 { return intervalWidths[iv.width].Milliseconds() }

// add counts a decision at ms since the Unix epoch.
func (iv *intervals) add(ms int64, allowed bool) {
	index := ms / iv.widthMs()
	if len(iv.counts) == 0 {
		iv.first = index
	}
	for index-iv.first >= maxIntervals && iv.width < len(intervalWidths)-1 {
		iv.widen()
		index = ms / iv.widthMs()
	}
	for int64(len(iv.counts)) <= index-iv.first {
		iv.counts = append(iv.counts, intervalCount{})
	}
	c := &iv.counts[index-iv.first]
	if allowed {
		c.admitted++
	} else {
		c.refused++
	}
}

// widen steps up to the next width, merging the counts into it.
func (iv *intervals) widen() {
	oldWidth := iv.widthMs()
	iv.width++
	newWidth := iv.widthMs()
	first := iv.first * oldWidth / newWidth
	merged := make([]intervalCount, 0, maxIntervals)
	for i, c := range iv.counts {
		j := int((iv.first+int64(i))*oldWidth/newWidth - first)
		for len(merged) <= j {
			merged = append(merged, intervalCount{})
		}
		merged[j].admitted += c.admitted
		merged[j].refused += c.refused
	}
	iv.first, iv.counts = first, merged
}

// start returns when the interval i begins, in ms since the Unix epoch.
func (iv *intervals) start(i int) int64 { return (iv.first + int64(i)) * iv.widthMs() }
