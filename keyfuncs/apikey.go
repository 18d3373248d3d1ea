package keyfuncs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// apiKeyPrefix starts every key the API-key functions return.
const apiKeyPrefix = "ak:"

// ErrUnknownAPIKey reports a request whose API key the application's validator
// rejected. It wraps ErrNoKey, so that FirstOf(ValidAPIKey(...), ip.Key) limits
// such a request by the client's address: an invented key never earns a bucket
// of its own. Test for it with errors.Is to answer 401 after the limit.
var ErrUnknownAPIKey = fmt.Errorf("%w: API key not accepted", ErrNoKey)

// APIKeyValidator reports whether an API key is one the application accepts. It
// runs on every request that carries a key, so it must be quick (a map or cache
// lookup) and safe for concurrent use. An error means the validator could not
// decide (its backend is down); the request then fails with ErrUnavailable (503)
// rather than being keyed by a key nobody checked.
type APIKeyValidator func(ctx context.Context, key string) (bool, error)

// ValidAPIKey returns a KeyFunc that keys a request by the API key in the named
// header, "ak:" followed by HashSecret of the key, when valid accepts it. A key
// the validator rejects gets ErrUnknownAPIKey (which wraps ErrNoKey); a request
// without the header, or with an empty value, gets ErrNoKey; a validator that
// fails gets an error wrapping ErrUnavailable and its own. So a client cannot
// mint buckets by inventing keys: with
//
//	keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", valid), ip.Key)
//
// an unknown key is limited by the client's address, in the same bucket as the
// client's requests without a key. The raw secret never reaches a store, a
// metric or a log. ValidAPIKey panics when header is empty or valid is nil,
// programming errors.
//
// The key is the secret as the client sent it, less surrounding white space (as
// APIKeySet trims the keys it holds): valid must accept exactly the keys issued
// (as APIKeySet does), not other spellings of them. A lookup that matches loosely
// (a case-insensitive database column) would give each spelling of one key its
// own bucket; then key by the ID of the key found, with AuthenticatedAPIKey.
func ValidAPIKey(header string, valid APIKeyValidator) KeyFunc {
	if valid == nil {
		panic("keyfuncs: ValidAPIKey needs a validator")
	}
	read := headerSecret(header)
	return func(r *http.Request) (string, error) {
		secret, err := read(r)
		if err != nil {
			return "", err
		}
		ok, err := valid(r.Context(), secret)
		if err != nil {
			return "", fmt.Errorf("%w: validating the API key: %w", ErrUnavailable, err)
		}
		if !ok {
			return "", ErrUnknownAPIKey
		}
		return apiKey(secret), nil
	}
}

// APIKeySet returns an APIKeyValidator that accepts exactly keys, for a static
// list (a flag, a config file). Empty and blank keys are never accepted.
func APIKeySet(keys ...string) APIKeyValidator {
	set := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			set[k] = struct{}{}
		}
	}
	return func(_ context.Context, key string) (bool, error) {
		_, ok := set[key]
		return ok, nil
	}
}

// AuthenticatedAPIKey returns a KeyFunc that keys a request by the API key (or
// key ID) that the application's authentication middleware stored in the request
// context under ctxKey after checking it: "ak:" followed by HashSecret of the
// value. The value may be a string, an integer or a fmt.Stringer, as for
// FromContext. A request that authentication did not mark gets ErrNoKey, so
// FirstOf falls through to the client's address. Run the rate limit after the
// authentication middleware. AuthenticatedAPIKey panics when ctxKey is nil.
func AuthenticatedAPIKey(ctxKey any) KeyFunc {
	if ctxKey == nil {
		panic("keyfuncs: AuthenticatedAPIKey needs a non-nil context key")
	}
	errAbsent := fmt.Errorf("%w: no authenticated API key in the request context", ErrNoKey)
	return func(r *http.Request) (string, error) {
		value, err := contextString(r.Context().Value(ctxKey))
		if err != nil {
			if errors.Is(err, errNoValue) {
				return "", errAbsent
			}
			return "", fmt.Errorf("keyfuncs: API key from the request context: %w", err)
		}
		return apiKey(value), nil
	}
}

// headerSecret returns a function that reads the first value of the named
// header, trimmed, or ErrNoKey when it is absent or empty. It panics when
// header is empty.
func headerSecret(header string) func(*http.Request) (string, error) {
	if header == "" {
		panic("keyfuncs: ValidAPIKey needs a header name")
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
		return secret, nil
	}
}

// apiKey is the key of an API key: "ak:" and its hash.
func apiKey(secret string) string {
	var buf [len(apiKeyPrefix) + hashHexLength]byte
	return string(appendHash(append(buf[:0], apiKeyPrefix...), secret))
}
