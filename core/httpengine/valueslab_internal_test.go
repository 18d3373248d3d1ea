package httpengine

import (
	"strings"
	"testing"
)

// TestValueSlabValues hands out values across several chunks, one larger than a
// chunk, and checks each against its text afterwards, and that a value slice has
// room for no second element.
func TestValueSlabValues(t *testing.T) {
	var s valueSlab
	var got [][]string
	var want []string
	for i := range 3 * slabValues {
		text := strings.Repeat(string(rune('a'+i%26)), 1+i*7%97)
		if i == slabValues+3 {
			text = strings.Repeat("x", 3*slabTextBytes)
		}
		got = append(got, s.value([]byte(text)))
		want = append(want, text)
	}
	for i := range got {
		if len(got[i]) != 1 || cap(got[i]) != 1 || got[i][0] != want[i] {
			t.Fatalf("value %d is %q (len %d, cap %d), want [%q]", i, got[i], len(got[i]), cap(got[i]), want[i])
		}
	}
	if v := s.value(nil); len(v) != 1 || v[0] != "" {
		t.Fatalf("empty value is %q", v)
	}
}
