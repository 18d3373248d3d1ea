package keyfuncs

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// KeyFunc extracts the rate-limit key from a request.
//
// It returns ErrNoKey (bare or wrapped) when the request does not carry the
// identity it looks for, so that composites such as FirstOf can fall through to
// the next function. Any other error means the request (or the configuration)
// is broken and must not be silently skipped. A key returned with a nil error is
// never empty and never longer than core.MaxKeyLength bytes.
type KeyFunc func(r *http.Request) (string, error)

// ErrNoKey reports that a request does not carry the identity a KeyFunc looks for.
var ErrNoKey = errors.New("keyfuncs: no key in request")

// ErrUnavailable is wrapped by the error of a KeyFunc that could not decide because
// something it depends on failed: ValidAPIKey's validator when its backend is down.
// The request is not the client's fault and may succeed later, so the HTTP layer
// answers it 503 with Retry-After, as for a failed store, rather than 400. Wrap it in
// the errors of key functions of your own that look identities up elsewhere.
var ErrUnavailable = errors.New("keyfuncs: identity could not be checked now")

// Const returns a KeyFunc that puts every request into one global bucket named key.
// The key is returned as given when it is safe (short, printable, without '|');
// otherwise its hash is used. It panics when key is empty, a programming error.
func Const(key string) KeyFunc {
	if key == "" {
		panic("keyfuncs: Const needs a non-empty key")
	}
	bounded := boundKey(safeValue(key))
	return func(*http.Request) (string, error) { return bounded, nil }
}

// FirstOf returns a KeyFunc that tries fns in order and returns the first key
// found. A function that reports ErrNoKey is skipped; any other error stops the
// search and is returned. When no function finds a key, the result wraps ErrNoKey.
//
// Typical use: the API key when the application accepts it, else the client IP
// (an invented key is limited by the address, never by a bucket of its own):
//
//	keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", valid), ip.Key)
func FirstOf(fns ...KeyFunc) KeyFunc {
	fns = append([]KeyFunc(nil), fns...)
	for i, fn := range fns {
		if fn == nil {
			panic(fmt.Sprintf("keyfuncs: FirstOf argument %d is nil", i))
		}
	}
	errNone := fmt.Errorf("%w: none of %d key functions found a key", ErrNoKey, len(fns))
	return func(r *http.Request) (string, error) {
		for _, fn := range fns {
			key, err := fn(r)
			if err == nil {
				return key, nil
			}
			if !errors.Is(err, ErrNoKey) {
				return "", err
			}
		}
		return "", errNone
	}
}

// Join returns a KeyFunc that combines the keys of all fns, in order, separated
// by '|', for example "user:alice|route:GET /api/report". Every function must
// find its key: the first error (ErrNoKey included) is returned as is. The
// functions of this package never put '|' inside a key, so joined keys are
// unambiguous; a joined key longer than core.MaxKeyLength is replaced by its
// hash ("h:" prefix).
func Join(fns ...KeyFunc) KeyFunc {
	if len(fns) == 0 {
		panic("keyfuncs: Join needs at least one key function")
	}
	fns = append([]KeyFunc(nil), fns...)
	for i, fn := range fns {
		if fn == nil {
			panic(fmt.Sprintf("keyfuncs: Join argument %d is nil", i))
		}
	}
	return func(r *http.Request) (string, error) {
		var b strings.Builder
		for i, fn := range fns {
			key, err := fn(r)
			if err != nil {
				return "", err
			}
			if key == "" {
				return "", fmt.Errorf("%w: Join part %d returned an empty key", ErrNoKey, i)
			}
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(key)
		}
		return boundKey(b.String()), nil
	}
}
