package keyfuncs

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

const formType = "application/x-www-form-urlencoded"

// formRequest returns a request with the given method, target, content type and body.
func formRequest(method, target, contentType, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

// multipartBody encodes fields (name, value pairs, in order) and returns the
// body and its content type.
func multipartBody(t testing.TB, fields ...string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := w.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), w.FormDataContentType()
}

func TestFormField(t *testing.T) {
	mp, mpType := multipartBody(t, "password", "x", "username", "carol")
	mpTwo, mpTwoType := multipartBody(t, "username", "carol", "username", "dave")
	mpFile := func() (string, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("username", "evil.txt")
		_, _ = fw.Write([]byte("mallory"))
		_ = w.WriteField("username", "erin")
		_ = w.Close()
		return b.String(), w.FormDataContentType()
	}
	mpf, mpfType := mpFile()
	long := strings.Repeat("n", 300)
	tooMany := strings.Repeat("a=1&", 10_001) + "username=alice"
	cases := []struct {
		name    string
		req     *http.Request
		want    string
		wantErr error
	}{
		{"urlencoded", formRequest("POST", "/login", formType, "username=alice&password=x"), "field:username:alice", nil},
		{"urlencoded with charset", formRequest("POST", "/login", formType+"; charset=utf-8", "username=alice"), "field:username:alice", nil},
		{"escapes", formRequest("POST", "/login", formType, "username=al%20ice+smith"), "field:username:al ice smith", nil},
		{"escaped name", formRequest("POST", "/login", formType, "user%6Eame=alice"), "field:username:alice", nil},
		{"two values", formRequest("POST", "/login", formType, "username=alice&username=bob"), "", ErrBadForm},
		{"one value twice", formRequest("POST", "/login", formType, "username=alice&username=alice"), "field:username:alice", nil},
		{"query repeats the body", formRequest("POST", "/login?username=alice", formType, "username=alice"), "field:username:alice", nil},
		{"PUT", formRequest("PUT", "/login", formType, "username=alice"), "field:username:alice", nil},
		{"PATCH", formRequest("PATCH", "/login", formType, "username=alice"), "field:username:alice", nil},
		{"query decoy beside the body", formRequest("POST", "/login?username=decoy", formType, "username=body"), "", ErrBadForm},
		{"empty body field beside the query", formRequest("POST", "/login?username=victim", formType, "username=&password=x"), "", ErrBadForm},
		{"POST with the name in the query only", formRequest("POST", "/login?username=victim", formType, "password=x"), "", ErrBadForm},
		{"GET reads the query", formRequest("GET", "/login?username=query", formType, "username=body"), "field:username:query", nil},
		{"other content type: no body field", formRequest("POST", "/login", "application/json", `{"username":"j"}`), "", ErrNoKey},
		{"other content type, name in the query", formRequest("POST", "/login?username=q", "application/json", `{"username":"j"}`), "", ErrBadForm},
		{"GET with two values", formRequest("GET", "/login?username=a&username=b", formType, ""), "", ErrBadForm},
		// echo's c.Bind reads "USERNAME" when "username" is missing.
		{"another spelling of the name", formRequest("POST", "/login", formType, "USERNAME=victim&password=x"), "", ErrBadForm},
		{"another spelling beside the name", formRequest("POST", "/login", formType, "username=alice&UserName=victim"), "", ErrBadForm},
		{"another spelling in the query", formRequest("POST", "/login?Username=victim", formType, "username=alice"), "", ErrBadForm},
		{"multipart", formRequest("POST", "/login", mpType, mp), "field:username:carol", nil},
		{"multipart, two values", formRequest("POST", "/login", mpTwoType, mpTwo), "", ErrBadForm},
		{"multipart, query decoy", formRequest("POST", "/login?username=decoy", mpType, mp), "", ErrBadForm},
		{"multipart file skipped", formRequest("POST", "/login", mpfType, mpf), "field:username:erin", nil},
		{"long value hashed", formRequest("POST", "/login", formType, "username="+long), "field:username:" + hashed(long), nil},
		{"control characters hashed", formRequest("POST", "/login", formType, "username=a%0Ab"), "field:username:" + hashed("a\nb"), nil},
		{"6 kB value hashed", formRequest("POST", "/login", formType, "username="+strings.Repeat("z", 6<<10)), "field:username:" + hashed(strings.Repeat("z", 6<<10)), nil},
		{"far into the body", formRequest("POST", "/login", formType, "pad="+strings.Repeat("A", 100<<10)+"&username=alice"), "field:username:alice", nil},
		{"absent", formRequest("POST", "/login", formType, "password=x"), "", ErrNoKey},
		{"empty", formRequest("POST", "/login", formType, "username=&password=x"), "", ErrNoKey},
		{"no body", formRequest("POST", "/login", formType, ""), "", ErrNoKey},
		{"bad escape", formRequest("POST", "/login", formType, "username=%zz&username=bob"), "", ErrBadForm},
		{"semicolon", formRequest("POST", "/login", formType, "username=eve;x=1&username=bob"), "", ErrBadForm},
		{"more parameters than net/http parses", formRequest("POST", "/login", formType, tooMany), "", ErrBadForm},
		{"multipart without boundary", formRequest("POST", "/login", "multipart/form-data", mp), "", ErrBadForm},
		{"multipart garbage", formRequest("POST", "/login", mpType, "garbage"), "", ErrBadForm},
		{"over net/http's 10 MB", formRequest("POST", "/login", formType, "username=alice&pad="+strings.Repeat("A", 10<<20)), "", ErrFormTooLarge},
		{"over a MaxBytesReader", func() *http.Request {
			r := formRequest("POST", "/login", formType, "username=alice&pad="+strings.Repeat("A", 4096))
			r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 1024)
			return r
		}(), "", ErrFormTooLarge},
	}
	username := FormField("username")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := username(tc.req)
			if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("FormField = %q, %v; want %q, %v", truncate(key, 60), err, tc.want, tc.wantErr)
			}
			if (errors.Is(err, ErrFormTooLarge) || errors.Is(err, ErrBadForm)) && errors.Is(err, ErrNoKey) {
				t.Fatal("a form error must not read as ErrNoKey")
			}
		})
	}
}

// TestFormFieldAgreesWithEveryReader checks that the key is made of the value
// every handler acts on, whether it reads r.PostFormValue (the body) or
// r.FormValue (as gin's form binding and echo's c.FormValue do: body or query,
// whichever r.Form lists first). A decoy in the query, a second value in the
// body, or a body net/http refuses to parse is refused outright, never keyed
// under a name some handler does not see.
func TestFormFieldAgreesWithEveryReader(t *testing.T) {
	mp, mpType := multipartBody(t, "username", "mp")
	tooMany := strings.Repeat("a=1&", 10_001) + "username=alice"
	requests := map[string]func() *http.Request{
		"urlencoded":         func() *http.Request { return formRequest("POST", "/", formType, "username=b") },
		"urlencoded decoy":   func() *http.Request { return formRequest("POST", "/?username=q", formType, "username=b") },
		"query only":         func() *http.Request { return formRequest("POST", "/?username=victim", formType, "other=b") },
		"two in the body":    func() *http.Request { return formRequest("POST", "/", formType, "username=b&username=victim") },
		"multipart":          func() *http.Request { return formRequest("POST", "/", mpType, mp) },
		"multipart decoy":    func() *http.Request { return formRequest("POST", "/?username=victim", mpType, mp) },
		"multipart repeated": func() *http.Request { return formRequest("POST", "/?username=mp", mpType, mp) },
		"GET":                func() *http.Request { return formRequest("GET", "/?username=q", formType, "username=b") },
		"PUT":                func() *http.Request { return formRequest("PUT", "/", formType, "username=b") },
		"DELETE":             func() *http.Request { return formRequest("DELETE", "/?username=q", formType, "username=b") },
		"10,001 params":      func() *http.Request { return formRequest("POST", "/", formType, tooMany) },
		"bad escape first":   func() *http.Request { return formRequest("POST", "/", formType, "x=%zz&username=b") },
	}
	for name, build := range requests {
		t.Run(name, func(t *testing.T) {
			r := build()
			body, form := build(), build()
			readers := map[string]string{"FormValue": form.FormValue("username")}
			switch r.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch:
				readers["PostFormValue"] = body.PostFormValue("username")
			}
			key, err := FormField("username")(r)
			switch {
			case err == nil:
				for reader, value := range readers {
					if key != "field:username:"+value {
						t.Fatalf("FormField = %q, a handler reading %s acts on %q", key, reader, value)
					}
				}
			case errors.Is(err, ErrBadForm):
				// Refused outright (400): never charged to another name.
			case errors.Is(err, ErrNoKey):
				for reader, value := range readers {
					if value != "" {
						t.Fatalf("FormField found no key, a handler reading %s acts on %q", reader, value)
					}
				}
			default:
				t.Fatal(err)
			}
			if r.Form == nil {
				t.Fatal("the form is not left parsed for the handler")
			}
		})
	}
}

func TestFormFieldLeavesFormForTheHandler(t *testing.T) {
	r := formRequest("POST", "/login", formType, "username=alice&password=correct-horse")
	if key, err := FormField("username")(r); err != nil || key != "field:username:alice" {
		t.Fatalf("FormField = %q, %v", key, err)
	}
	if got := r.PostFormValue("password"); got != "correct-horse" {
		t.Fatalf("handler's PostFormValue saw %q", got)
	}
	if _, err := FormField("password")(r); err != nil {
		t.Fatalf("a second field on the parsed form: %v", err)
	}
}

func TestFormFieldReadError(t *testing.T) {
	r := formRequest("POST", "/login", formType, "")
	broken := errors.New("connection reset")
	r.Body = io.NopCloser(io.MultiReader(strings.NewReader("username=al"), errReader{broken}))
	_, err := FormField("username")(r)
	if !errors.Is(err, ErrBadForm) || errors.Is(err, ErrNoKey) {
		t.Fatalf("err = %v, want ErrBadForm (not ErrNoKey)", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestFormFieldUsesParsedForm(t *testing.T) {
	r := formRequest("POST", "/login", formType, "username=alice")
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	if key, err := FormField("username")(r); err != nil || key != "field:username:alice" {
		t.Fatalf("FormField after ParseForm = %q, %v", key, err)
	}
	r.PostForm, r.Form = url.Values{}, url.Values{}
	if _, err := FormField("username")(r); !errors.Is(err, ErrNoKey) {
		t.Fatalf("an empty parsed form: err = %v, want ErrNoKey", err)
	}
}

func TestFormFieldWith(t *testing.T) {
	lower := FormFieldWith("username", strings.ToLower)
	for _, v := range []string{"Alice", "ALICE", "alice"} {
		key, err := lower(formRequest("POST", "/login", formType, "username="+v))
		if err != nil || key != "field:username:alice" {
			t.Fatalf("FormFieldWith(ToLower) of %q = %q, %v", v, key, err)
		}
	}
	blank := FormFieldWith("username", strings.TrimSpace)
	if _, err := blank(formRequest("POST", "/login", formType, "username=+++")); !errors.Is(err, ErrNoKey) {
		t.Fatalf("a value normalized to empty: err = %v, want ErrNoKey", err)
	}
}
