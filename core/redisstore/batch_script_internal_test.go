package redisstore

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// encodeBatchReply writes entries as the batch driver does: an integer equal to the
// same integer of the last entry without an error is left out.
func encodeBatchReply(entries []batchEntry) []int64 {
	var reply []int64
	var last []int64
	for _, e := range entries {
		if e.err != nil {
			msg := e.err.Error()
			reply = append(reply, -int64(len(msg)))
			for i := 0; i < len(msg); i++ {
				reply = append(reply, int64(msg[i]))
			}
			continue
		}
		head := len(reply)
		reply = append(reply, int64(len(e.ints)))
		for j, v := range e.ints {
			if j >= len(last) || last[j] != v {
				reply = append(reply, v)
				reply[head] += 64 << j
			}
		}
		last = e.ints
	}
	return reply
}

// sameEntries reports whether two decoded batch replies are equal.
func sameEntries(a, b []batchEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i].err == nil) != (b[i].err == nil) || (a[i].err != nil && a[i].err.Error() != b[i].err.Error()) ||
			!slices.Equal(a[i].ints, b[i].ints) {
			return false
		}
	}
	return true
}

// TestSplitBatchReply decodes a reply written by hand in the format batchDriver
// documents, and refuses replies of other shapes.
func TestSplitBatchReply(t *testing.T) {
	msg := "WRONGTYPE Operation"
	reply := []int64{7 + 64*0b1111111, 1767225600000, 1, 1, 4, 0, 100, 0} // all 7 integers follow
	reply = append(reply, -int64(len(msg)))                               // an error, which repeats nothing
	for i := 0; i < len(msg); i++ {
		reply = append(reply, int64(msg[i]))
	}
	reply = append(reply, 7+64*0b0111110, 0, 0, 0, 250, 1000) // integers 2 to 6 follow; 1 and 7 repeat the first decision's
	reply = append(reply, 7)                                  // the decision before, again
	reply = append(reply, 0)                                  // an empty reply
	reply = append(reply, 2+64*0b11, 8, 9)                    // nothing to repeat after an empty reply
	entries := []batchEntry{
		{ints: []int64{1767225600000, 1, 1, 4, 0, 100, 0}},
		{err: batchReplyError(msg)},
		{ints: []int64{1767225600000, 0, 0, 0, 250, 1000, 0}},
		{ints: []int64{1767225600000, 0, 0, 0, 250, 1000, 0}},
		{ints: []int64{}},
		{ints: []int64{8, 9}},
	}
	got, err := splitBatchReply(reply, len(entries))
	if err != nil {
		t.Fatal(err)
	}
	if !sameEntries(got, entries) {
		t.Fatalf("got %+v, want %+v", got, entries)
	}
	if again := encodeBatchReply(entries); !slices.Equal(again, reply) {
		t.Fatalf("encodeBatchReply wrote %v, want %v", again, reply)
	}
	var redisErr batchReplyError
	if !errors.As(got[1].err, &redisErr) {
		t.Fatalf("the error %v is not a batchReplyError", got[1].err)
	}
	for _, bad := range [][]int64{
		nil,                         // too short
		{7 + 64*0b1111111, 1, 2},    // claims more than remain
		{1, 5, 2 + 64*0b01, 6},      // repeats an integer the decision before did not have
		{1 + 64*0b10, 5},            // a mask bit beyond its length
		{41 + 64, 5},                // too long a reply
		{-3, 65, 66},                // error cut short
		{-2, 65, 256},               // not a byte
		{-(maxBatchErrorBytes + 1)}, // too long an error
		{0, 0, 0, 0, 0, 9},          // integers left over
	} {
		if _, err := splitBatchReply(bad, 4); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// FuzzSplitBatchReply: any reply is cut into entries that lie within it, or refused;
// never a panic.
func FuzzSplitBatchReply(f *testing.F) {
	f.Add([]byte{}, uint8(1))
	f.Add(binary.LittleEndian.AppendUint64(nil, 0), uint8(1))
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1), 5), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		var reply []int64
		for len(data) >= 8 {
			reply = append(reply, int64(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		entries, err := splitBatchReply(reply, int(n))
		if err != nil {
			return
		}
		if len(entries) != int(n) {
			t.Fatalf("%d entries, want %d", len(entries), n)
		}
		again, err := splitBatchReply(encodeBatchReply(entries), int(n))
		if err != nil || !sameEntries(again, entries) {
			t.Fatalf("decoded %+v, encoded again and decoded %+v (%v)", entries, again, err)
		}
	})
}
