package keyfuncs

import (
	"fmt"
	"net/url"
	"strings"
)

// checkSpelling returns ErrBadForm when values hold name under another spelling:
// the same letters in another case ("USERNAME" for "username"). echo's c.Bind
// matches a field's name regardless of case when the exact name is missing, so a
// handler could act on a value that a key function reading the exact name did not
// count, and the request would be charged to its fallback instead.
func checkSpelling(values url.Values, name, what string) error {
	for k := range values {
		if k != name && strings.EqualFold(k, name) {
			return fmt.Errorf("%w: %s %q is also sent as %q", ErrBadForm, what, name, k)
		}
	}
	return nil
}
