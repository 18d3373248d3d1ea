package redisstore

import (
	"encoding/binary"
	"errors"
	"testing"
)

// encodeBatchReply writes entries as the batch driver does.
func encodeBatchReply(entries []batchEntry) []int64 {
	var reply []int64
	for _, e := range entries {
		if e.err != nil {
			msg := e.err.Error()
			reply = append(reply, -int64(len(msg)))
			for i := 0; i < len(msg); i++ {
				reply = append(reply, int64(msg[i]))
			}
			continue
		}
		reply = append(reply, int64(len(e.ints)))
		reply = append(reply, e.ints...)
	}
	return reply
}

func TestSplitBatchReply(t *testing.T) {
	entries := []batchEntry{
		{ints: []int64{1767225600000, 1, 1, 4, 0, 100, 0}},
		{err: batchReplyError("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{ints: []int64{}},
		{ints: []int64{1767225600000, 0, 0, 0, 250, 1000, 0}},
	}
	got, err := splitBatchReply(encodeBatchReply(entries), len(entries))
	if err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		if len(got[i].ints) != len(entries[i].ints) || (got[i].err == nil) != (entries[i].err == nil) {
			t.Fatalf("entry %d: got %+v, want %+v", i, got[i], entries[i])
		}
		for j := range got[i].ints {
			if got[i].ints[j] != entries[i].ints[j] {
				t.Fatalf("entry %d: got %v, want %v", i, got[i].ints, entries[i].ints)
			}
		}
		if e := entries[i].err; e != nil {
			var redisErr batchReplyError
			if !errors.As(got[i].err, &redisErr) || got[i].err.Error() != e.Error() {
				t.Fatalf("entry %d: error %v, want %v", i, got[i].err, e)
			}
		}
	}
	for _, bad := range [][]int64{
		nil,                         // too short
		{7, 1, 2},                   // claims more than remain
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
		total := 0
		for _, e := range entries {
			total += 1 + len(e.ints)
			if e.err != nil {
				total += len(e.err.Error())
			}
		}
		if total != len(reply) || len(entries) != int(n) {
			t.Fatalf("%d entries covering %d of %d integers", len(entries), total, len(reply))
		}
	})
}
