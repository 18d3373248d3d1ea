package keyfuncs

import (
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
)

// MaxFormMemory is the maxMemory FormField passes to r.ParseMultipartForm: the
// same 32 MB that r.FormValue and r.PostFormValue use, so that the key function
// and the handler parse a form alike. Bound request bodies with
// http.MaxBytesReader (or a server-wide limit): net/http caps a URL-encoded body
// at 10 MB, but not a multipart one.
const MaxFormMemory = 32 << 20

// ErrBadForm reports a request body that net/http cannot parse as a form (a
// malformed body, more than net/http's 10,000 parameters, a broken multipart
// body). It is not ErrNoKey: the request is answered as a client error (400)
// rather than charged to some other name, and it is never silently unlimited.
var ErrBadForm = errors.New("keyfuncs: request form cannot be parsed")

// ErrFormTooLarge reports a request body that exceeds a size limit: net/http's
// own (10 MB for a URL-encoded form), an http.MaxBytesReader's, or
// MaxJSONBytes for JSONField. It is not ErrNoKey: skipping the limit would let
// padded requests bypass it. Answer it as a client error (413 Content Too Large).
var ErrFormTooLarge = errors.New("keyfuncs: request body too large to find the key field")

// FormField returns a KeyFunc that keys a request by a form field, for example
// the account name of a login form: "field:" + name + ":" + value, such as
// "field:username:alice", the key JSONField gives the same value, so that an
// application that accepts both encodings (FirstOf) counts one budget per value.
// A long value, or one with control characters, is replaced by its hash ("h:"
// prefix). An absent or empty field gets ErrNoKey.
// FormField panics when name is empty.
//
// The value is the one the handler acts on, read by net/http's own parser with
// its limits: for POST, PUT and PATCH from the body, for other methods from the
// URL query. Handlers read a field in different places: r.PostFormValue the body
// only, r.FormValue, gin's form binding and echo's c.FormValue the body or the
// query, whichever r.Form lists first. So the field must be unambiguous: a field
// given again with another value (a "?username=" decoy beside the body's name,
// or two names in the body) gets ErrBadForm, whichever copy a handler would
// pick, and so does a body method's field found only in the query, and a field
// sent under another spelling of its name ("USERNAME"), which echo's c.Bind reads
// when the exact name is missing. FormField
// parses the form with r.ParseMultipartForm(MaxFormMemory), so the handler finds
// it parsed. A body that cannot be parsed gets ErrBadForm, and one over a size
// limit ErrFormTooLarge; neither wraps ErrNoKey.
//
// Login names are usually case-insensitive: use FormUsername, or each spelling
// of one account gets its own budget.
func FormField(name string) KeyFunc {
	return FormFieldWith(name, nil)
}

// FormFieldWith is FormField with the value passed through normalize (when
// non-nil) before it is used, so that every spelling the application accepts
// for one account shares one key. A value that normalize makes empty gets
// ErrNoKey. For usernames, prefer FormUsername.
func FormFieldWith(name string, normalize func(string) string) KeyFunc {
	if name == "" {
		panic("keyfuncs: FormField needs a field name")
	}
	var norm func(string) (string, error)
	if normalize != nil {
		norm = func(v string) (string, error) { return normalize(v), nil }
	}
	return fieldKey("form", name, formValue, norm)
}

// FormUsername is FormField for a username: the value is normalised with
// NormalizeUsername (full case folding, then PRECIS UsernameCaseMapped), so that
// "Alice", "ALICE", "straße" and "STRASSE", and the NFC and NFD spellings of
// "josé" share one key. A value that PRECIS rejects gets an error wrapping
// ErrInvalidUsername (not ErrNoKey): answer it as a client error. The handler
// must look the account up by NormalizeUsername of the same field.
func FormUsername(name string) KeyFunc {
	if name == "" {
		panic("keyfuncs: FormUsername needs a field name")
	}
	return fieldKey("form", name, formValue, NormalizeUsername)
}

// fieldKey builds the KeyFunc of a request field, which read finds in a body of
// the encoding (form or json): "field:" + name + ":" + the (normalised) value.
// The key leaves the encoding out: it is the client's choice, and must not earn
// a second budget.
func fieldKey(encoding, name string, read func(*http.Request, string) (string, error), normalize func(string) (string, error)) KeyFunc {
	keyPrefix := "field:" + name + ":"
	errAbsent := fmt.Errorf("%w: no %s field %q", ErrNoKey, encoding, name)
	return func(r *http.Request) (string, error) {
		value, err := read(r, name)
		if err != nil {
			return "", err
		}
		if value == "" {
			return "", errAbsent
		}
		if normalize != nil {
			if value, err = normalize(value); err != nil {
				return "", err
			}
			if value == "" {
				return "", errAbsent
			}
		}
		return boundKey(keyPrefix + safeValue(value)), nil
	}
}

// formValue returns the value of the field name in r's form, body and URL query,
// with the parse error that r.FormValue ignores, or ErrBadForm when the form
// gives the field more than one value (see FormField). A form that an earlier
// middleware parsed (r.Form set) is used as is.
func formValue(r *http.Request, name string) (string, error) {
	if r.Form == nil {
		// ParseMultipartForm drops ParseForm's error for a body that is not
		// multipart, so ask ParseForm first.
		if err := r.ParseForm(); err != nil {
			return "", formError(err)
		}
	}
	if err := r.ParseMultipartForm(MaxFormMemory); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return "", formError(err)
	}
	if err := checkSpelling(r.Form, name, "field"); err != nil {
		return "", err
	}
	// r.Form holds the body's values and the query's, r.PostForm the body's.
	body, all := r.PostForm[name], r.Form[name]
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		if len(body) == 0 && len(all) > 0 {
			return "", fmt.Errorf("%w: field %q is in the URL query, not the body", ErrBadForm, name)
		}
	}
	value, found := "", false
	for _, values := range [2][]string{all, body} {
		for _, v := range values {
			if found && v != value {
				return "", fmt.Errorf("%w: field %q has more than one value", ErrBadForm, name)
			}
			value, found = v, true
		}
	}
	return value, nil
}

// formError classifies a form parse error as ErrFormTooLarge or ErrBadForm.
func formError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) || errors.Is(err, multipart.ErrMessageTooLarge) || err.Error() == "http: POST too large" {
		return fmt.Errorf("%w: %w", ErrFormTooLarge, err)
	}
	return fmt.Errorf("%w: %w", ErrBadForm, err)
}
