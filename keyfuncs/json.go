package keyfuncs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode"
)

// MaxJSONBytes bounds the JSON body that JSONField and JSONUsername read. A
// longer body gets ErrFormTooLarge.
const MaxJSONBytes = 64 << 10

// ErrBadJSON reports a body that is not a JSON object, or whose field is not a
// string. It is not ErrNoKey: answer it as a client error (400).
var ErrBadJSON = errors.New("keyfuncs: request body is not the expected JSON object")

// JSONField returns a KeyFunc that keys a request by a top-level string field of
// a JSON object body, for JSON logins: "field:" + name + ":" + value, such as
// "field:username:alice", as FormField keys it. The field is matched as
// encoding/json matches a struct field of type string (exact name, else
// case-insensitively), so the key is the value that json.Unmarshal, or a
// json.Decoder, gives the handler. A field given more than once, in any
// spelling, with different values (a decoy beside the name, or a null after it)
// gets ErrBadJSON: a struct takes the last, a map the last exact match. A long value,
// or one with control characters, is replaced by its hash ("h:" prefix).
//
// JSONField reads at most MaxJSONBytes of the body and then restores it, so the
// handler reads the whole body from its first byte. Only POST, PUT and PATCH
// bodies are read. A body counts as JSON when its content type says so
// (application/json or any +json type) or when it starts with "{": many
// handlers decode JSON whatever the content type says. A body without the
// field, with a null or empty value, an empty body, or one that is not JSON gets
// ErrNoKey; a JSON body that is not an object, or whose field is not a string,
// gets ErrBadJSON; a JSON body over MaxJSONBytes gets ErrFormTooLarge. JSONField
// panics when name is empty.
func JSONField(name string) KeyFunc {
	if name == "" {
		panic("keyfuncs: JSONField needs a field name")
	}
	return fieldKey("json", name, jsonValueOf(name), nil)
}

// JSONUsername is JSONField for a username, normalised with NormalizeUsername
// (see FormUsername).
func JSONUsername(name string) KeyFunc {
	if name == "" {
		panic("keyfuncs: JSONUsername needs a field name")
	}
	return fieldKey("json", name, jsonValueOf(name), NormalizeUsername)
}

// jsonValueOf returns a function that reads the string value json.Unmarshal
// would store into a struct field tagged `json:"name"`, from r's body, and
// restores the body. It panics when name cannot be a json tag.
func jsonValueOf(name string) func(*http.Request, string) (string, error) {
	if !validJSONTag(name) {
		panic(fmt.Sprintf("keyfuncs: JSON field name %q cannot be matched as encoding/json would", name))
	}
	return func(r *http.Request, _ string) (string, error) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			return "", nil
		}
		mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		declared := mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
		body, err := readBounded(r, MaxJSONBytes)
		switch {
		case err != nil && len(bytes.TrimLeft(body, " \t\r\n")) == 0:
			return "", err // white space up to the limit: the object may follow it
		case !declared && !startsObject(body):
			return "", nil // not JSON, whatever its size: a handler that decodes JSON fails on it
		case err != nil:
			return "", err
		case len(bytes.TrimSpace(body)) == 0:
			return "", nil
		}
		raw, err := member(body, name)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrBadJSON, err)
		}
		if raw == nil || string(raw) == "null" {
			return "", nil
		}
		var value string
		if err := json.Unmarshal(raw, &value); err != nil {
			return "", fmt.Errorf("%w: field %q is not a string", ErrBadJSON, name)
		}
		return value, nil
	}
}

// member returns the raw value of the member name in the first JSON value of body,
// as a json.Decoder reads it (json.Unmarshal also rejects what follows it, and then
// the handler acts on nothing), or nil when the object has none, or when that value
// is null. A struct field tagged name matches a member by its exact name, else
// case-insensitively (encoding/json folds as strings.EqualFold does), and takes the
// last; a map takes the last exact match; another decoder perhaps the first. So a
// member named twice with values that differ is an error: whichever the limit
// counted, the handler could act on another. A first value that is not an object is
// an error too.
func member(body []byte, name string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, err
	case tok == nil: // null: a struct decodes it as nothing
		return nil, nil
	case tok != json.Delim('{'):
		return nil, errors.New("not an object")
	}
	var found json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if key, _ := tok.(string); !strings.EqualFold(key, name) {
			continue
		}
		if found != nil && !bytes.Equal(value, found) {
			return nil, fmt.Errorf("field %q given more than once, with different values", name)
		}
		found = value
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	return found, nil
}

// startsObject reports whether body's first byte after white space opens a JSON
// object.
func startsObject(body []byte) bool {
	rest := bytes.TrimLeft(body, " \t\r\n")
	return len(rest) > 0 && rest[0] == '{'
}

// validJSONTag reports whether encoding/json accepts name as a field's tag name.
func validJSONTag(name string) bool {
	if name == "" || name == "-" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case unicode.IsLetter(c), unicode.IsDigit(c):
		default:
			return false
		}
	}
	return true
}

// readBounded reads r's whole body when it holds at most limit bytes, and puts
// it back as a fresh reader for the handler. A longer body gets ErrFormTooLarge,
// and a failed read its error, each with the bytes read so far; the handler
// still reads all of the body.
func readBounded(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return body, fmt.Errorf("%w: %w", ErrFormTooLarge, err)
		}
		return body, fmt.Errorf("%w: reading the body: %w", ErrBadJSON, err)
	}
	if int64(len(body)) > limit {
		return body, fmt.Errorf("%w: JSON body over %d bytes", ErrFormTooLarge, limit)
	}
	return body, nil
}
