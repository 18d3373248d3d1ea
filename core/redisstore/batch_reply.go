package redisstore

import "fmt"

// maxBatchErrorBytes bounds the bytes of one decision's error message in a batch
// reply, as lua/batch.lua cuts it.
const maxBatchErrorBytes = 200

// batchReplyError is one decision's error from a batch reply: what Redis would have
// answered to that decision alone. It is a redis.Error, so that wrapError classifies it
// as it classifies the error reply of an unbatched call.
type batchReplyError string

func (e batchReplyError) Error() string { return string(e) }

// RedisError marks batchReplyError as an error reply of Redis.
func (batchReplyError) RedisError() {}

// batchEntry is one decision's part of a batch reply: its fields (allowed remaining
// retry reset delay), or its error.
type batchEntry struct {
	fields []int64
	err    error
}

// splitBatchReply decodes the reply of the batch script (lua/batch.lua): the
// instant its decisions were taken at, then the entries of its n decisions: per
// decision fieldsPerResult integers, the first of them 0 or 1; or minus the length
// of an error message, then its bytes. A reply of another shape is an error, and
// then no entry is returned.
func splitBatchReply(reply []int64, n int) (now int64, entries []batchEntry, err error) {
	if len(reply) == 0 || !isInstant(reply[0]) {
		return 0, nil, fmt.Errorf("batch reply of %d integers does not begin with an instant", len(reply))
	}
	now, entries = reply[0], make([]batchEntry, n)
	pos := 1
	for i := range entries {
		if pos >= len(reply) {
			return 0, nil, fmt.Errorf("batch reply of %d integers ends before decision %d of %d", len(reply), i+1, n)
		}
		if head := reply[pos]; head < 0 {
			size := -head
			if size > maxBatchErrorBytes || size > int64(len(reply)-pos-1) {
				return 0, nil, fmt.Errorf("batch reply: decision %d claims an error of %d bytes, %d integers remain", i+1, size, len(reply)-pos-1)
			}
			msg := make([]byte, size)
			for j, v := range reply[pos+1 : pos+1+int(size)] {
				if v < 0 || v > 255 {
					return 0, nil, fmt.Errorf("batch reply: decision %d: error byte %d", i+1, v)
				}
				msg[j] = byte(v)
			}
			entries[i].err = batchReplyError(msg)
			pos += 1 + int(size)
			continue
		}
		if pos+fieldsPerResult > len(reply) {
			return 0, nil, fmt.Errorf("batch reply of %d integers ends within decision %d", len(reply), i+1)
		}
		entries[i].fields = reply[pos : pos+fieldsPerResult : pos+fieldsPerResult]
		pos += fieldsPerResult
	}
	if pos != len(reply) {
		return 0, nil, fmt.Errorf("batch reply: %d integers after the %d decisions", len(reply)-pos, n)
	}
	return now, entries, nil
}
