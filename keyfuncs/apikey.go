package keyfuncs

import (
	"fmt"
	"net/http"
	"strings"
)

// apiKeyPrefix starts every key APIKey returns.
const apiKeyPrefix = "ak:"

// APIKey returns a KeyFunc that keys a request by the API key in the named
// header: "ak:" followed by HashSecret of the header's (first) value. The raw
// secret is never returned, so it never reaches a store, a metric or a log, and a
// secret of any length (6 kB, say) yields a key of fixed length. A request
// without the header, or with an empty value, gets ErrNoKey. APIKey panics when
// header is empty, a programming error.
//
// APIKey does not check that the key is valid: authenticate first when invalid
// keys must not get a bucket of their own, or limit by client IP before
// authentication.
func APIKey(header string) KeyFunc {
	if header == "" {
		panic("keyfuncs: APIKey needs a header name")
	}
	canonical := http.CanonicalHeaderKey(header)
	errAbsent := fmt.Errorf("%w: no %s header", ErrNoKey, canonical)
	errEmpty := fmt.Errorf("%w: empty %s header", ErrNoKey, canonical)
	return func(r *http.Request) (string, error) {
		values := r.Header[canonical]
		if len(values) == 0 {
			return "", errAbsent
		}
		secret := strings.TrimSpace(values[0])
		if secret == "" {
			return "", errEmpty
		}
		var buf [len(apiKeyPrefix) + hashHexLength]byte
		return string(appendHash(append(buf[:0], apiKeyPrefix...), secret)), nil
	}
}
