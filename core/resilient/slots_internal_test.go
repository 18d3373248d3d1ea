package resilient

import "testing"

// slotOf agrees with Redis Cluster's CLUSTER KEYSLOT, hash tags included.
func TestSlotOf(t *testing.T) {
	for key, want := range map[string]int{
		"123456789":                0x31C3, // the CRC16-XMODEM check value
		"foo":                      12182,
		"rl:{foo}api#gcra:k":       12182, // the hash tag decides
		"{}foo":                    slotOf("{}foo"),
		"{foo":                     slotOf("{foo"),
		"rl:{api#tb.10.1000.20:k}": slotOf("api#tb.10.1000.20:k"),
	} {
		if got := slotOf(key); got != want {
			t.Errorf("slotOf(%q) = %d, want %d", key, got, want)
		}
	}
	if slotOf("{}foo") == slotOf("") || slotOf("{foo") == slotOf("foo") {
		t.Error("an empty or unclosed tag must hash the whole key")
	}
}
