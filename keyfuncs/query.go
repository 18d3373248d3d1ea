package keyfuncs

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Query returns a KeyFunc that keys a request by a URL query parameter:
// "query:" + name + ":" + value, for example "query:account:alice". The value is
// the one r.URL.Query().Get(name) returns (the first occurrence); a long value,
// or one with control characters, is replaced by its hash ("h:" prefix). An
// absent or empty parameter gets ErrNoKey. Query panics when name is empty.
func Query(name string) KeyFunc {
	if name == "" {
		panic("keyfuncs: Query needs a parameter name")
	}
	prefix := "query:" + name + ":"
	errAbsent := fmt.Errorf("%w: no query parameter %q", ErrNoKey, name)
	return func(r *http.Request) (string, error) {
		value, found := firstURLEncodedValue(r.URL.RawQuery, name, true)
		if !found || value == "" {
			return "", errAbsent
		}
		return boundKey(prefix + safeValue(value)), nil
	}
}

// firstURLEncodedValue returns the first value of name in a URL-encoded
// string, skipping the pairs that url.ParseQuery rejects, as url.Values.Get
// would. When complete is false the text was cut short, and its last pair
// (which may be cut) is ignored.
func firstURLEncodedValue(encoded, name string, complete bool) (value string, found bool) {
	if !complete {
		i := strings.LastIndexByte(encoded, '&')
		if i < 0 {
			return "", false
		}
		encoded = encoded[:i]
	}
	for encoded != "" {
		var pair string
		pair, encoded, _ = strings.Cut(encoded, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil || key != name {
			continue
		}
		v, err := url.QueryUnescape(rawValue)
		if err != nil {
			continue
		}
		return v, true
	}
	return "", false
}
