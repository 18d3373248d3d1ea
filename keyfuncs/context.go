package keyfuncs

import (
	"fmt"
	"net/http"
	"reflect"
	"strconv"
)

// FromContext returns a KeyFunc that keys a request by a value that the user's
// own middleware (authentication, typically) stored in the request context under
// ctxKey. The key is kind + ":" + value, for example "user:alice".
//
// The value may be a string, a fmt.Stringer, or an integer (user IDs); a value
// that is long or holds control characters is replaced by its hash ("h:"
// prefix). A missing value, a nil pointer, or an empty string gets ErrNoKey;
// a value of another type gets an error that is not ErrNoKey, because it is a
// programming error that must not be skipped silently. FromContext panics when
// ctxKey is nil or kind is empty.
func FromContext(ctxKey any, kind string) KeyFunc {
	if ctxKey == nil {
		panic("keyfuncs: FromContext needs a non-nil context key")
	}
	if kind == "" {
		panic("keyfuncs: FromContext needs a kind, such as \"user\"")
	}
	prefix := kind + ":"
	errAbsent := fmt.Errorf("%w: no %s in the request context", ErrNoKey, kind)
	return func(r *http.Request) (string, error) {
		value, err := contextString(r.Context().Value(ctxKey))
		if err != nil {
			if err == errNoValue {
				return "", errAbsent
			}
			return "", fmt.Errorf("keyfuncs: %s from the request context: %w", kind, err)
		}
		return boundKey(prefix + safeValue(value)), nil
	}
}

// User returns FromContext(ctxKey, "user"): keys such as "user:alice".
func User(ctxKey any) KeyFunc { return FromContext(ctxKey, "user") }

// Tenant returns FromContext(ctxKey, "tenant"): keys such as "tenant:acme".
func Tenant(ctxKey any) KeyFunc { return FromContext(ctxKey, "tenant") }

// errNoValue reports a context value that is absent, empty or a nil pointer.
var errNoValue = fmt.Errorf("%w: no value", ErrNoKey)

// contextString turns a context value into the identity it names.
func contextString(v any) (string, error) {
	var s string
	switch v := v.(type) {
	case nil:
		return "", errNoValue
	case string:
		s = v
	case int:
		s = strconv.FormatInt(int64(v), 10)
	case int32:
		s = strconv.FormatInt(int64(v), 10)
	case int64:
		s = strconv.FormatInt(v, 10)
	case uint:
		s = strconv.FormatUint(uint64(v), 10)
	case uint32:
		s = strconv.FormatUint(uint64(v), 10)
	case uint64:
		s = strconv.FormatUint(v, 10)
	case fmt.Stringer:
		if isNilPointer(v) {
			return "", errNoValue
		}
		s = v.String()
	default:
		return "", fmt.Errorf("value of type %T is neither a string, an integer nor a fmt.Stringer", v)
	}
	if s == "" {
		return "", errNoValue
	}
	return s, nil
}

// isNilPointer reports whether v holds a nil pointer, map, slice, func, chan or
// interface, whose String method could panic.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
