package keyfuncs

import (
	"errors"
	"fmt"

	"golang.org/x/text/cases"
	"golang.org/x/text/secure/precis"
)

// ErrInvalidUsername reports a username that PRECIS UsernameCaseMapped rejects
// (spaces, control characters, unassigned code points, an empty result). It is
// not ErrNoKey: such a request is a client error, and it must not be counted
// under some other name.
var ErrInvalidUsername = errors.New("keyfuncs: invalid username")

// NormalizeUsername returns the canonical form of a username: Unicode full case
// folding, then the PRECIS UsernameCaseMapped profile (RFC 8265: width-mapped,
// lower-cased and NFC-normalised), so that "Alice", "ALICE" and "aLice", the NFC
// and NFD spellings of "josé", and "STRASSE", "straße" and "strasse" are one name.
// PRECIS alone maps case with toLower, which keeps "ß" apart from "ss" and a final
// sigma apart from a medial one: a client could then present one account, to an
// application that folds case, under several names, each with its own budget. Key
// functions built by FormUsername and JSONUsername normalise with it; the handler
// must look accounts up by the same form, or the limit counts one name while the
// handler checks another.
//
// An empty name stays empty (the key functions then report ErrNoKey). The error
// wraps ErrInvalidUsername.
func NormalizeUsername(name string) (string, error) {
	// PRECIS comes after the fold: folding maps Cherokee small letters to capitals,
	// which PRECIS lower-cases again, so the result is stable when normalised twice.
	canonical, err := precis.UsernameCaseMapped.String(cases.Fold().String(name))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidUsername, err)
	}
	return canonical, nil
}
