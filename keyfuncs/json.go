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
// a JSON object body, for JSON logins: "json:" + name + ":" + value, such as
// "json:username:alice". The field is matched as encoding/json matches a struct
// field (case-insensitively, the last occurrence wins), so the key is the value
// that json.Unmarshal gives the handler. A long value, or one with control
// characters, is replaced by its hash ("h:" prefix).
//
// JSONField reads at most MaxJSONBytes of the body and then restores it, so the
// handler reads the whole body from its first byte. A body without the field,
// with a null or empty value, or an empty body gets ErrNoKey; a body that is
// not a JSON object, or whose field is not a string, gets ErrBadJSON; a body
// over MaxJSONBytes gets ErrFormTooLarge. A body is read only for POST, PUT and
// PATCH with a JSON content type (application/json or any +json type);
// otherwise the result is ErrNoKey. JSONField panics when name is empty.
func JSONField(name string) KeyFunc {
	if name == "" {
		panic("keyfuncs: JSONField needs a field name")
	}
	return fieldKey("json:", name, jsonValueOf(name), nil)
}

// JSONUsername is JSONField for a username, normalised with NormalizeUsername
// (see FormUsername).
func JSONUsername(name string) KeyFunc {
	if name == "" {
		panic("keyfuncs: JSONUsername needs a field name")
	}
	return fieldKey("json:", name, jsonValueOf(name), NormalizeUsername)
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
	// match wins).
	target := reflect.StructOf([]reflect.StructField{{
		Name: "Value",
		Type: reflect.TypeFor[json.RawMessage](),
		Tag:  reflect.StructTag(`json:"` + name + `"`),
	}})
	return func(r *http.Request, _ string) (string, error) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			return "", nil
		}
		mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json") {
			return "", nil
		}
		body, err := readBounded(r, MaxJSONBytes)
		if err != nil {
			return "", err
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return "", nil
		}
		v := reflect.New(target)
		if err := json.Unmarshal(body, v.Interface()); err != nil {
			return "", fmt.Errorf("%w: %w", ErrBadJSON, err)
		}
		raw := v.Elem().Field(0).Bytes()
		if len(raw) == 0 || string(raw) == "null" {
			return "", nil
		}
		var value string
		if err := json.Unmarshal(raw, &value); err != nil {
			return "", fmt.Errorf("%w: field %q is not a string", ErrBadJSON, name)
		}
		return value, nil
	}
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
// and the handler still reads all of it.
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
			return nil, fmt.Errorf("%w: %w", ErrFormTooLarge, err)
		}
		return nil, fmt.Errorf("%w: reading the body: %w", ErrBadJSON, err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: JSON body over %d bytes", ErrFormTooLarge, limit)
	}
	return body, nil
}
