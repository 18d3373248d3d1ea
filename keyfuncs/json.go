package keyfuncs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
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
	// A struct with one field tagged name: decoding into it matches members the
	// way the handler's own struct does (exact name, else case-folded; the last
	// match wins, a null excepted).
	target := reflect.StructOf([]reflect.StructField{{
		Name: "Value",
		Type: reflect.TypeFor[lastNonNull](),
		Tag:  reflect.StructTag(`json:"` + name + `"`),
	}})
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
		// The first JSON value, as a json.Decoder reads it; json.Unmarshal also
		// rejects what follows it, and then the handler acts on nothing.
		v := reflect.New(target)
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(v.Interface()); err != nil {
			return "", fmt.Errorf("%w: %w", ErrBadJSON, err)
		}
		if ambiguous(body, name) {
			return "", fmt.Errorf("%w: field %q given more than once, with different values", ErrBadJSON, name)
		}
		raw := v.Elem().Field(0).Bytes()
		if len(raw) == 0 {
			return "", nil
		}
		var value string
		if err := json.Unmarshal(raw, &value); err != nil {
			return "", fmt.Errorf("%w: field %q is not a string", ErrBadJSON, name)
		}
		return value, nil
	}
}

// lastNonNull decodes as a string field does: the last string decoded into it
// wins, a null leaves it as it was, and any other value is an error. So
// {"username":"alice","username":null} gives the handler's string field "alice",
// and the key "alice" too.
type lastNonNull []byte

// errNotString is the error of a member that a string field cannot hold.
var errNotString = errors.New("not a string")

// UnmarshalJSON keeps b, a JSON string, and ignores a null.
func (v *lastNonNull) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
	case len(b) > 0 && b[0] == '"':
		*v = append((*v)[:0], b...)
	default:
		return errNotString
	}
	return nil
}

// ambiguous reports whether the first JSON value of body, an object, names the
// field twice (exactly or case-insensitively: encoding/json matches a struct field
// as strings.EqualFold does) with values that differ. A struct takes the last,
// a map the last exact match, another decoder perhaps the first: whichever the
// limit counted, the handler could act on another, so such a body is refused.
func ambiguous(body []byte, name string) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	var first json.RawMessage
	seen := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return false
		}
		if key, _ := tok.(string); !strings.EqualFold(key, name) {
			continue
		}
		if seen && !bytes.Equal(value, first) {
			return true
		}
		first, seen = value, true
	}
	return false
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
