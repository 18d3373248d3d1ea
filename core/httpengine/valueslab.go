package httpengine

import "strings"

// Sizes of the chunks a valueSlab carves header values from.
const (
	slabTextBytes = 1024 // bytes of field text per chunk
	slabValues    = 32   // header value slices per chunk
)

// valueSlab hands out header values built per request (the RateLimit field, the
// RateLimit-Policy field of a dynamic stack) without one allocation each: the text
// is appended to a shared chunk and each value is a one-element slice of a shared
// array. Every byte and element is written once, before its value is handed out,
// and never again, so values stay valid and unchanged for as long as a response
// (or anything it was given to) holds them, after the Ticket is recycled; a full
// chunk is replaced, never reused, and the garbage collector frees it with its last
// value. A valueSlab belongs to one Ticket and is used by one goroutine at a time.
type valueSlab struct {
	text   strings.Builder
	values []string
	next   int // the first unused element of values
}

// value returns a header value slice holding a copy of b. Its capacity is one,
// so a later Header.Add copies it instead of writing into the shared array.
func (s *valueSlab) value(b []byte) []string {
	if s.text.Cap()-s.text.Len() < len(b) {
		s.text = strings.Builder{} // the old chunk stays with the values carved from it
		s.text.Grow(max(slabTextBytes, len(b)))
	}
	start := s.text.Len()
	s.text.Write(b)
	if s.next == len(s.values) {
		s.values, s.next = make([]string, slabValues), 0
	}
	v := s.values[s.next : s.next+1 : s.next+1]
	s.next++
	v[0] = s.text.String()[start:]
	return v
}
