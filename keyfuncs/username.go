package keyfuncs

import (
	"errors"
	"fmt"

	"golang.org/x/text/secure/precis"
)

// ErrInvalidUsername reports a username that PRECIS UsernameCaseMapped rejects
// (spaces, control characters, unassigned code points, an empty result). It is
// not ErrNoKey: such a request is a client error, and it must not be counted
// under some other name.
var ErrInvalidUsername = errors.New("keyfuncs: invalid username")

// NormalizeUsername returns the canonical form of a username under the PRECIS
// UsernameCaseMapped profile (RFC 8265): width-mapped, case-folded and
// NFC-normalised, so that "Alice", "ALICE" and "aLice", and the NFC and NFD
// spellings of "josé", are one name. Key functions built by FormUsername and
// JSONUsername normalise with it; the handler must look accounts up by the same
// form, or the limit counts one name while the handler checks another.
//
// An empty name stays empty (the key functions then report ErrNoKey). The error
// wraps ErrInvalidUsername.
func NormalizeUsername(name string) (string, error) {
	canonical, err := precis.UsernameCaseMapped.String(name)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidUsername, err)
	}
	return canonical, nil
}
