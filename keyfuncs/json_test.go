package keyfuncs

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const jsonType = "application/json"

func TestJSONField(t *testing.T) {
	long := strings.Repeat("n", 300)
	cases := []struct {
		name    string
		method  string
		ctype   string
		body    string
		want    string
		wantErr error
	}{
		{"field", "POST", jsonType, `{"username":"alice","password":"x"}`, "field:username:alice", nil},
		{"charset", "POST", jsonType + "; charset=utf-8", `{"username":"alice"}`, "field:username:alice", nil},
		{"+json type", "PUT", "application/vnd.api+json", `{"username":"alice"}`, "field:username:alice", nil},
		{"case-folded name", "POST", jsonType, `{"USERNAME":"alice"}`, "field:username:alice", nil},
		{"a decoy in another case", "POST", jsonType, `{"username":"victim","USERNAME":"decoy"}`, "", ErrBadJSON},
		{"a decoy in the same case", "POST", jsonType, `{"username":"decoy","username":"alice"}`, "", ErrBadJSON},
		{"one value twice", "POST", jsonType, `{"username":"alice","Username":"alice"}`, "field:username:alice", nil},
		{"white space up to the limit, then the object", "POST", "", strings.Repeat(" ", MaxJSONBytes+1) + `{"username":"victim"}`, "", ErrFormTooLarge},
		{"escapes", "POST", jsonType, `{"username":"al\u0069ce"}`, "field:username:alice", nil},
		{"nested ignored", "POST", jsonType, `{"user":{"username":"x"}}`, "", ErrNoKey},
		{"long value hashed", "POST", jsonType, `{"username":"` + long + `"}`, "field:username:" + hashed(long), nil},
		{"absent", "POST", jsonType, `{"password":"x"}`, "", ErrNoKey},
		{"null", "POST", jsonType, `{"username":null}`, "", ErrNoKey},
		{"empty", "POST", jsonType, `{"username":""}`, "", ErrNoKey},
		{"empty body", "POST", jsonType, ``, "", ErrNoKey},
		{"GET", "GET", jsonType, `{"username":"alice"}`, "", ErrNoKey},
		{"JSON under a form type", "POST", formType, `{"username":"alice"}`, "field:username:alice", nil},
		{"JSON with no type", "POST", "", ` {"username":"alice"}`, "field:username:alice", nil},
		{"form body", "POST", formType, `username=alice`, "", ErrNoKey},
		{"null after the value", "POST", jsonType, `{"username":"alice","password":"x","username":null}`, "", ErrBadJSON},
		{"case-folded null after the value", "POST", jsonType, `{"username":"alice","USERNAME":null}`, "", ErrBadJSON},
		{"empty after the value", "POST", jsonType, `{"username":"alice","username":""}`, "", ErrBadJSON},
		{"data after the object", "POST", jsonType, `{"username":"alice"} {"username":"bob"}`, "field:username:alice", nil},
		{"large upload", "POST", "application/octet-stream", strings.Repeat("A", MaxJSONBytes+1), "", ErrNoKey},
		{"too large under a form type", "POST", formType, `{"username":"alice","pad":"` + strings.Repeat("A", MaxJSONBytes) + `"}`, "", ErrFormTooLarge},
		{"not JSON under another type", "POST", "text/plain", `{username: alice}`, "", ErrBadJSON},
		{"number", "POST", jsonType, `{"username":42}`, "", ErrBadJSON},
		{"array", "POST", jsonType, `["username","alice"]`, "", ErrBadJSON},
		{"garbage", "POST", jsonType, `{"username":"alice"`, "", ErrBadJSON},
		{"too large", "POST", jsonType, `{"username":"alice","pad":"` + strings.Repeat("A", MaxJSONBytes) + `"}`, "", ErrFormTooLarge},
	}
	fn := JSONField("username")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/login", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.ctype)
			key, err := fn(r)
			if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("JSONField = %q, %v; want %q, %v", truncate(key, 60), err, tc.want, tc.wantErr)
			}
			if (errors.Is(err, ErrBadJSON) || errors.Is(err, ErrFormTooLarge)) && errors.Is(err, ErrNoKey) {
				t.Fatal("a body error must not read as ErrNoKey")
			}
			rest, err := io.ReadAll(r.Body)
			if err != nil || string(rest) != tc.body {
				t.Fatalf("the handler reads %d bytes (%v), want the %d-byte body", len(rest), err, len(tc.body))
			}
		})
	}
}

// TestJSONFieldAgreesWithUnmarshal checks that the key is the value the handler
// acts on, whether it decodes into a struct or a map; a body on which those two
// could disagree (the field twice, with different values) is refused.
func TestJSONFieldAgreesWithUnmarshal(t *testing.T) {
	for _, body := range []string{
		`{"username":"a"}`, `{"Username":"a"}`, `{"USERNAME":"a","password":"p"}`, `{"username":"a","Username":"a"}`,
		`{"Username":"a","username":"b"}`, `{"username":"b","USERNAME":"a"}`,
		`{"USERNAME":"x","UserName":"y"}`, `{"username":"a","username":"b"}`,
		`{"username":"a","username":null}`, `{"username":"a","USERNAME":null,"password":"p"}`,
	} {
		var login struct {
			Username string `json:"username"`
		}
		var members map[string]any
		if json.Unmarshal([]byte(body), &login) != nil || json.Unmarshal([]byte(body), &members) != nil {
			t.Fatalf("%s: not JSON", body)
		}
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
		r.Header.Set("Content-Type", jsonType)
		key, err := JSONField("username")(r)
		switch {
		case errors.Is(err, ErrBadJSON):
			// Refused (400): never keyed under a name a handler does not see.
		case err != nil || key != "field:username:"+login.Username:
			t.Errorf("%s: JSONField = %q, %v; json.Unmarshal into a struct gives %q", body, key, err, login.Username)
		case members["username"] != nil && members["username"] != login.Username:
			t.Errorf("%s: JSONField = %q; a map gives %q", body, key, members["username"])
		}
	}
}

func TestJSONUsername(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(`{"username":"ALICE"}`))
	r.Header.Set("Content-Type", jsonType)
	if key, err := JSONUsername("username")(r); err != nil || key != "field:username:alice" {
		t.Fatalf("JSONUsername = %q, %v", key, err)
	}
}

func TestJSONFieldPanics(t *testing.T) {
	for _, name := range []string{"", "-", `a"b`, "a,b", `a\b`} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("JSONField(%q) did not panic", name)
				}
			}()
			JSONField(name)
		}()
	}
}

func FuzzJSONField(f *testing.F) {
	f.Add([]byte(`{"username":"alice"}`))
	f.Add([]byte(`{"USERNAME":"a","username":"b"}`))
	f.Add([]byte(`{"username":1}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"username":"alice","username":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", jsonType)
		key, err := JSONField("username")(r)
		rest, readErr := io.ReadAll(r.Body)
		if readErr != nil || string(rest) != string(body) {
			t.Fatalf("the handler reads %d bytes (%v), want the %d-byte body", len(rest), readErr, len(body))
		}
		// The handler's view: a string field, decoded by a json.Decoder (which
		// json.Unmarshal agrees with, or rejects the body).
		var login struct {
			Username string `json:"username"`
		}
		decodeErr := json.NewDecoder(strings.NewReader(string(body))).Decode(&login)
		switch {
		case err == nil:
			checkKey(t, key)
			if decodeErr != nil || login.Username == "" || key != boundKey("field:username:"+safeValue(login.Username)) {
				t.Fatalf("key %q; the handler's decoder gives %q, %v", key, login.Username, decodeErr)
			}
		case errors.Is(err, ErrNoKey):
			if decodeErr == nil && login.Username != "" {
				t.Fatalf("no key; the handler's decoder gives %q", login.Username)
			}
		case errors.Is(err, ErrBadJSON), errors.Is(err, ErrFormTooLarge):
		default:
			t.Fatalf("JSONField: %v", err)
		}
	})
}

// A login that accepts form and JSON bodies (FirstOf) counts one budget per
// account: the key leaves the encoding, which the client picks, out.
func TestFormAndJSONUsernamesShareOneKey(t *testing.T) {
	key := FirstOf(JSONUsername("username"), FormUsername("username"))
	asJSON := httptest.NewRequest("POST", "/login", strings.NewReader(`{"username":"Alice","password":"x"}`))
	asJSON.Header.Set("Content-Type", "application/json")
	asForm := httptest.NewRequest("POST", "/login", strings.NewReader("username=ALICE&password=x"))
	asForm.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	jsonKey, err1 := key(asJSON)
	formKey, err2 := key(asForm)
	if err1 != nil || err2 != nil || jsonKey != formKey || jsonKey != "field:username:alice" {
		t.Fatalf("JSON body %q (%v), form body %q (%v); want both field:username:alice", jsonKey, err1, formKey, err2)
	}
}
