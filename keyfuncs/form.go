package keyfuncs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
)

// MaxFormBytes bounds how much of a request body FormField reads. A field that
// does not appear within the first MaxFormBytes bytes is not found, and such a
// request gets ErrFormTooLarge.
const MaxFormBytes = 64 << 10

// maxFormValueBytes bounds the part of a multipart field value that is read.
const maxFormValueBytes = 4 << 10

// ErrFormTooLarge reports a form body longer than MaxFormBytes whose first
// MaxFormBytes bytes do not hold the field a FormField looks for. It is not
// ErrNoKey: the field may lie further on, where the handler would find it, so
// skipping the limit would let padded requests bypass it. Answer it as a client
// error (413 Content Too Large).
var ErrFormTooLarge = errors.New("keyfuncs: form body too large to find the key field")

// FormField returns a KeyFunc that keys a request by a form field, for example
// the account name of a login form: "form:" + name + ":" + value, such as
// "form:username:alice". A long value, or one with control characters, is
// replaced by its hash ("h:" prefix). An absent or empty field gets ErrNoKey.
// FormField panics when name is empty.
//
// The value is the one r.FormValue(name) gives the handler, with the same
// precedence (a URL-encoded body of a POST, PUT or PATCH first, then the URL
// query, then a multipart/form-data body), so a client cannot be limited under
// one name and served under another. FormField reads at most MaxFormBytes of the
// body and leaves the body readable by the handler afterwards, from its first
// byte: it never calls r.ParseForm, whose reads are much larger. A form already
// parsed by an earlier middleware (r.Form set) is used as is.
//
// Login names are often case-insensitive: use FormFieldWith(name,
// strings.ToLower) then, or each spelling of one account gets its own budget.
func FormField(name string) KeyFunc {
	return FormFieldWith(name, nil)
}

// FormFieldWith is FormField with the value passed through normalize (when
// non-nil) before it is used, so that every spelling the application accepts
// for one account shares one key. A value that normalize makes empty gets
// ErrNoKey.
func FormFieldWith(name string, normalize func(string) string) KeyFunc {
	if name == "" {
		panic("keyfuncs: FormField needs a field name")
	}
	prefix := "form:" + name + ":"
	errAbsent := fmt.Errorf("%w: no form field %q", ErrNoKey, name)
	return func(r *http.Request) (string, error) {
		value, err := formValue(r, name)
		if err != nil {
			return "", err
		}
		if normalize != nil {
			value = normalize(value)
		}
		if value == "" {
			return "", errAbsent
		}
		return boundKey(prefix + safeValue(value)), nil
	}
}

// formValue returns what r.FormValue(name) would, reading a bounded prefix of
// the body.
func formValue(r *http.Request, name string) (string, error) {
	if r.Form != nil {
		return r.Form.Get(name), nil
	}
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "application/x-www-form-urlencoded":
		if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			body, complete, err := peekBody(r)
			if err != nil {
				return "", err
			}
			if v, found := firstURLEncodedValue(string(body), name, complete); found {
				return v, nil
			}
			if !complete {
				return "", fmt.Errorf("%w: field %q not in the first %d bytes", ErrFormTooLarge, name, MaxFormBytes)
			}
		}
		v, _ := firstURLEncodedValue(r.URL.RawQuery, name, true)
		return v, nil
	case "multipart/form-data":
		if v, found := firstURLEncodedValue(r.URL.RawQuery, name, true); found {
			return v, nil
		}
		boundary := params["boundary"]
		if boundary == "" {
			return "", nil
		}
		body, complete, err := peekBody(r)
		if err != nil {
			return "", err
		}
		v, found := firstMultipartValue(body, boundary, name)
		if !found && !complete {
			return "", fmt.Errorf("%w: field %q not in the first %d bytes", ErrFormTooLarge, name, MaxFormBytes)
		}
		return v, nil
	default:
		v, _ := firstURLEncodedValue(r.URL.RawQuery, name, true)
		return v, nil
	}
}

// firstMultipartValue returns the first non-file value of the field name in a
// (possibly cut) multipart body.
func firstMultipartValue(body []byte, boundary, name string) (string, bool) {
	reader := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := reader.NextPart()
		if err != nil {
			return "", false
		}
		if part.FormName() != name || part.FileName() != "" {
			continue
		}
		value, err := io.ReadAll(io.LimitReader(part, maxFormValueBytes+1))
		if err != nil {
			return "", false
		}
		return string(value), true
	}
}

// peekBody returns up to MaxFormBytes of r's body, and whether that is all of it,
// and replaces r.Body so that the handler still reads the whole body from its
// first byte. Repeated calls (several FormFields) reuse the first read.
func peekBody(r *http.Request) (prefix []byte, complete bool, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true, nil
	}
	if replay, ok := r.Body.(*replayBody); ok && replay.offset == 0 {
		if replay.err != nil {
			return nil, false, fmt.Errorf("keyfuncs: reading the form body: %w", replay.err)
		}
		return replay.prefix[:min(len(replay.prefix), MaxFormBytes)], replay.complete, nil
	}
	read, err := io.ReadAll(io.LimitReader(r.Body, MaxFormBytes+1))
	replay := &replayBody{prefix: read, rest: r.Body, err: err}
	if err == nil {
		replay.complete = len(read) <= MaxFormBytes
		if !replay.complete {
			read = read[:MaxFormBytes]
		}
	}
	r.Body = replay
	if err != nil {
		return nil, false, fmt.Errorf("keyfuncs: reading the form body: %w", err)
	}
	return read, replay.complete, nil
}

// replayBody serves the bytes peekBody read, then the rest of the original body,
// and closes the original body.
type replayBody struct {
	prefix   []byte
	offset   int
	rest     io.ReadCloser
	complete bool
	err      error
}

// Read implements io.Reader.
func (b *replayBody) Read(p []byte) (int, error) {
	if b.offset < len(b.prefix) {
		n := copy(p, b.prefix[b.offset:])
		b.offset += n
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.rest.Read(p)
}

// Close implements io.Closer by closing the original body.
func (b *replayBody) Close() error { return b.rest.Close() }
