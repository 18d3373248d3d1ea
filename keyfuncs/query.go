package keyfuncs

import (
	"fmt"
	"net/http"
	"net/url"
)

// Query returns a KeyFunc that keys a request by a URL query parameter:
// "query:" + name + ":" + value, for example "query:account:alice". The value is
// the one r.URL.Query().Get(name) returns (the first occurrence), parsed by
// net/url with its limits; a long value, or one with control characters, is
// replaced by its hash ("h:" prefix). An absent or empty parameter gets ErrNoKey;
// a query net/url refuses outright (more than its 10,000 parameters, or nothing
// but malformed pairs) gets ErrBadForm, so that it is never counted under a name
// the handler does not see, and so does a parameter also sent under another
// spelling of its name ("?ACCOUNT="), which echo's c.Bind reads when the exact
// name is missing. Query panics when name is empty.
func Query(name string) KeyFunc {
	if name == "" {
		panic("keyfuncs: Query needs a parameter name")
	}
	prefix := "query:" + name + ":"
	errAbsent := fmt.Errorf("%w: no query parameter %q", ErrNoKey, name)
	return func(r *http.Request) (string, error) {
		values, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil && len(values) == 0 {
			return "", fmt.Errorf("%w: the URL query: %w", ErrBadForm, err)
		}
		if err := checkSpelling(values, name, "query parameter"); err != nil {
			return "", err
		}
		value := values.Get(name)
		if value == "" {
			return "", errAbsent
		}
		return boundKey(prefix + safeValue(value)), nil
	}
}
