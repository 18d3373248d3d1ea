package redisstore

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// encodeBatchReply writes entries, decided at now, as lua/batch.lua does.
func encodeBatchReply(now int64, entries []batchEntry) []int64 {
	reply := []int64{now}
	for _, e := range entries {
		if e.err == nil {
			reply = append(reply, e.fields...)
			continue
		}
		msg := e.err.Error()
		reply = append(reply, -int64(len(msg)))
		for i := 0; i < len(msg); i++ {
			reply = append(reply, int64(msg[i]))
		}
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
			!slices.Equal(a[i].fields, b[i].fields) {
			return false
		}
	}
	return true
}

// TestSplitBatchReply decodes a reply written by hand in the format lua/batch.lua
// documents, and refuses replies of other shapes.
func TestSplitBatchReply(t *testing.T) {
	msg := "WRONGTYPE Operation"
	reply := []int64{1_800_000_000_000, 1, 4, 0, 100, 0}
	reply = append(reply, -int64(len(msg)))
	for i := 0; i < len(msg); i++ {
		reply = append(reply, int64(msg[i]))
	}
	reply = append(reply, 0, 0, 250, 1000, 0)
	entries := []batchEntry{
		{fields: []int64{1, 4, 0, 100, 0}},
		{err: batchReplyError(msg)},
		{fields: []int64{0, 0, 250, 1000, 0}},
	}
	now, got, err := splitBatchReply(reply, len(entries))
	if err != nil {
		t.Fatal(err)
	}
	if now != reply[0] {
		t.Fatalf("now %d, want %d", now, reply[0])
	}
	if !sameEntries(got, entries) {
		t.Fatalf("got %+v, want %+v", got, entries)
	}
	if again := encodeBatchReply(now, entries); !slices.Equal(again, reply) {
		t.Fatalf("encodeBatchReply wrote %v, want %v", again, reply)
	}
	var redisErr batchReplyError
	if !errors.As(got[1].err, &redisErr) {
		t.Fatalf("the error %v is not a batchReplyError", got[1].err)
	}
	for _, bad := range [][]int64{
		nil,                            // no instant
		{-1, 1, 4, 0, 100, 0},          // an instant before the epoch
		{1 << 53, 1, 4, 0, 100, 0},     // an instant beyond any clock
		{5},                            // no decision
		{5, 1, 4, 0},                   // a decision cut short
		{5, -3, 65, 66},                // error cut short
		{5, -2, 65, 256},               // not a byte
		{5, -(maxBatchErrorBytes + 1)}, // too long an error
		{5, 1, 4, 0, 100, 0, 9},        // integers left over
	} {
		if _, _, err := splitBatchReply(bad, 1); err == nil {
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
		now, entries, err := splitBatchReply(reply, int(n))
		if err != nil {
			return
		}
		if len(entries) != int(n) {
			t.Fatalf("%d entries, want %d", len(entries), n)
		}
		nowAgain, again, err := splitBatchReply(encodeBatchReply(now, entries), int(n))
		if err != nil || nowAgain != now || !sameEntries(again, entries) {
			t.Fatalf("decoded %+v, encoded again and decoded %+v (%v)", entries, again, err)
		}
	})
}
