package keyfuncs

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/go-ratelimit/ratelimit/core"
)

// maxValueLength bounds a user-controlled value that is kept verbatim in a key;
// longer values are replaced by their hash.
const maxValueLength = 256

// hashPrefix marks a value (or a whole key) that was replaced by its hash.
const hashPrefix = "h:"

// hashHexLength is the number of hex digits kept from a SHA-256 digest (128 bits).
const hashHexLength = 32

// HashSecret returns the first 32 hex digits (128 bits) of the SHA-256 digest of
// secret. ValidAPIKey and AuthenticatedAPIKey use it so that raw secrets never
// reach a store or a log; use it to find the key of a known API key, for
// example in an operator's tooling.
func HashSecret(secret string) string {
	var buf [hashHexLength]byte
	return string(appendHash(buf[:0], secret))
}

// hashed returns the "h:"-prefixed hash that stands for v in a key.
func hashed(v string) string {
	var buf [len(hashPrefix) + hashHexLength]byte
	return string(appendHash(append(buf[:0], hashPrefix...), v))
}

// appendHash appends the hash HashSecret returns for s to dst. Strings of
// usual lengths are copied to the stack rather than converted on the heap.
func appendHash(dst []byte, s string) []byte {
	var sum [sha256.Size]byte
	if len(s) <= 256 {
		var buf [256]byte
		sum = sha256.Sum256(buf[:copy(buf[:], s)])
	} else {
		sum = sha256.Sum256([]byte(s))
	}
	return hex.AppendEncode(dst, sum[:hashHexLength/2])
}

// safeValue returns v when it can appear verbatim in a key, or its hash when it
// is long, is not valid UTF-8, contains a control character or the '|' that Join
// uses, or starts with the "h:" of hashed values (so that no raw value can pose
// as the hash of another).
func safeValue(v string) string {
	if needsHash(v) {
		return hashed(v)
	}
	return v
}

func needsHash(v string) bool {
	if len(v) > maxValueLength || strings.HasPrefix(v, hashPrefix) || !utf8.ValidString(v) {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f || c == '|' {
			return true
		}
	}
	for _, r := range v {
		if r >= 0x80 && r <= 0x9f { // C1 control characters
			return true
		}
	}
	return false
}

// boundKey replaces a key longer than core.MaxKeyLength by its hash.
func boundKey(key string) string {
	if len(key) > core.MaxKeyLength {
		return hashed(key)
	}
	return key
}
