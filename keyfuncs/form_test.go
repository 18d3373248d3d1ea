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
	mp, mpType := multipartBody(t, "password", "x", "username", "carol", "username", "dave")
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
	padding := "&pad=" + strings.Repeat("A", MaxFormBytes)
	long := strings.Repeat("n", 300)
	cases := []struct {
		name    string
		req     *http.Request
		want    string
		wantErr error
	}{
		{"urlencoded", formRequest("POST", "/login", formType, "username=alice&password=x"), "form:username:alice", nil},
		{"urlencoded with charset", formRequest("POST", "/login", formType+"; charset=utf-8", "username=alice"), "form:username:alice", nil},
		{"escapes", formRequest("POST", "/login", formType, "username=al%20ice+smith"), "form:username:al ice smith", nil},
		{"escaped name", formRequest("POST", "/login", formType, "user%6Eame=alice"), "form:username:alice", nil},
		{"first value", formRequest("POST", "/login", formType, "username=alice&username=bob"), "form:username:alice", nil},
		{"bad pair skipped", formRequest("POST", "/login", formType, "username=%zz&username=bob"), "form:username:bob", nil},
		{"semicolon pair skipped", formRequest("POST", "/login", formType, "username=eve;x=1&username=bob"), "form:username:bob", nil},
		{"PUT", formRequest("PUT", "/login", formType, "username=alice"), "form:username:alice", nil},
		{"PATCH", formRequest("PATCH", "/login", formType, "username=alice"), "form:username:alice", nil},
		{"body before query", formRequest("POST", "/login?username=query", formType, "username=body"), "form:username:body", nil},
		{"query when body lacks it", formRequest("POST", "/login?username=query", formType, "password=x"), "form:username:query", nil},
		{"GET reads no body", formRequest("GET", "/login?username=query", formType, "username=body"), "form:username:query", nil},
		{"other content type: query only", formRequest("POST", "/login?username=q", "application/json", `{"username":"j"}`), "form:username:q", nil},
		{"multipart", formRequest("POST", "/login", mpType, mp), "form:username:carol", nil},
		{"multipart query first", formRequest("POST", "/login?username=query", mpType, mp), "form:username:query", nil},
		{"multipart file skipped", formRequest("POST", "/login", mpfType, mpf), "form:username:erin", nil},
		{"long value hashed", formRequest("POST", "/login", formType, "username="+long), "form:username:" + hashed(long), nil},
		{"control characters hashed", formRequest("POST", "/login", formType, "username=a%0Ab"), "form:username:" + hashed("a\nb"), nil},
		{"6 kB value hashed", formRequest("POST", "/login", formType, "username="+strings.Repeat("z", 6<<10)), "form:username:" + hashed(strings.Repeat("z", 6<<10)), nil},
		{"padded after the field", formRequest("POST", "/login", formType, "username=alice"+padding), "form:username:alice", nil},
		{"absent", formRequest("POST", "/login", formType, "password=x"), "", ErrNoKey},
		{"empty", formRequest("POST", "/login", formType, "username=&password=x"), "", ErrNoKey},
		{"no body", formRequest("POST", "/login", formType, ""), "", ErrNoKey},
		{"multipart without boundary", formRequest("POST", "/login", "multipart/form-data", mp), "", ErrNoKey},
		{"multipart garbage", formRequest("POST", "/login", mpType, "garbage"), "", ErrNoKey},
		{"field beyond the bound", formRequest("POST", "/login", formType, strings.TrimPrefix(padding, "&")+"&username=alice"), "", ErrFormTooLarge},
		{"field cut by the bound", formRequest("POST", "/login", formType, "username="+strings.Repeat("a", MaxFormBytes)), "", ErrFormTooLarge},
		{"multipart field beyond the bound", func() *http.Request {
			body, ct := multipartBody(t, "pad", strings.Repeat("A", MaxFormBytes), "username", "alice")
			return formRequest("POST", "/login", ct, body)
		}(), "", ErrFormTooLarge},
	}
	username := FormField("username")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := username(tc.req)
			if key != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("FormField = %q, %v; want %q, %v", truncate(key, 60), err, tc.want, tc.wantErr)
			}
			if errors.Is(err, ErrFormTooLarge) && errors.Is(err, ErrNoKey) {
				t.Fatal("ErrFormTooLarge must not read as ErrNoKey")
			}
		})
	}
}

func TestFormFieldAgreesWithFormValue(t *testing.T) {
	mp, mpType := multipartBody(t, "username", "mp")
	requests := map[string]func() *http.Request{
		"urlencoded":      func() *http.Request { return formRequest("POST", "/?username=q", formType, "username=b") },
		"query fallback":  func() *http.Request { return formRequest("POST", "/?username=q", formType, "other=b") },
		"multipart":       func() *http.Request { return formRequest("POST", "/", mpType, mp) },
		"multipart query": func() *http.Request { return formRequest("POST", "/?username=q", mpType, mp) },
		"GET":             func() *http.Request { return formRequest("GET", "/?username=q", formType, "username=b") },
		"PUT":             func() *http.Request { return formRequest("PUT", "/", formType, "username=b") },
		"DELETE":          func() *http.Request { return formRequest("DELETE", "/?username=q", formType, "username=b") },
	}
	for name, build := range requests {
		t.Run(name, func(t *testing.T) {
			key, err := FormField("username")(build())
			if err != nil {
				t.Fatal(err)
			}
			if want := "form:username:" + build().FormValue("username"); key != want {
				t.Fatalf("FormField = %q, r.FormValue gives %q", key, want)
			}
		})
	}
}

func TestFormFieldLeavesBodyReadable(t *testing.T) {
	bodies := []string{
		"username=alice&password=correct-horse",
		"password=x" + "&pad=" + strings.Repeat("A", MaxFormBytes+100) + "&username=alice",
	}
	for _, body := range bodies {
		r := formRequest("POST", "/login", formType, body)
		closed := &closeRecorder{Reader: r.Body}
		r.Body = closed
		_, _ = FormField("username")(r)
		_, _ = FormField("password")(r) // a second field reuses the first read
		got, err := io.ReadAll(r.Body)
		if err != nil || string(got) != body {
			t.Fatalf("handler read %d bytes (err %v), want the %d-byte body intact", len(got), err, len(body))
		}
		if err := r.Body.Close(); err != nil || !closed.closed {
			t.Fatalf("closing the replayed body did not close the original (err %v)", err)
		}
	}
	// The handler's own form parsing still works.
	r := formRequest("POST", "/login", formType, "username=alice&password=correct-horse")
	if key, err := FormField("username")(r); err != nil || key != "form:username:alice" {
		t.Fatalf("FormField = %q, %v", key, err)
	}
	if r.PostFormValue("password") != "correct-horse" {
		t.Fatalf("handler's ParseForm saw %q", r.PostFormValue("password"))
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestFormFieldReadError(t *testing.T) {
	r := formRequest("POST", "/login", formType, "")
	broken := errors.New("connection reset")
	r.Body = io.NopCloser(io.MultiReader(strings.NewReader("username=al"), errReader{broken}))
	_, err := FormField("username")(r)
	if !errors.Is(err, broken) || errors.Is(err, ErrNoKey) {
		t.Fatalf("err = %v, want the read error (not ErrNoKey)", err)
	}
	if _, err := FormField("username")(r); !errors.Is(err, broken) {
		t.Fatalf("second call: err = %v, want the read error again", err)
	}
	got, err := io.ReadAll(r.Body)
	if string(got) != "username=al" || !errors.Is(err, broken) {
		t.Fatalf("handler reads %q, %v; want the prefix then the error", got, err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestFormFieldUsesParsedForm(t *testing.T) {
	r := formRequest("POST", "/login", formType, "username=alice")
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	if key, err := FormField("username")(r); err != nil || key != "form:username:alice" {
		t.Fatalf("FormField after ParseForm = %q, %v", key, err)
	}
	r.Form = url.Values{}
	if _, err := FormField("username")(r); !errors.Is(err, ErrNoKey) {
		t.Fatalf("an empty parsed form: err = %v, want ErrNoKey", err)
	}
}

func TestFormFieldWith(t *testing.T) {
	lower := FormFieldWith("username", strings.ToLower)
	for _, v := range []string{"Alice", "ALICE", "alice"} {
		key, err := lower(formRequest("POST", "/login", formType, "username="+v))
		if err != nil || key != "form:username:alice" {
			t.Fatalf("FormFieldWith(ToLower) of %q = %q, %v", v, key, err)
		}
	}
	blank := FormFieldWith("username", strings.TrimSpace)
	if _, err := blank(formRequest("POST", "/login", formType, "username=+++")); !errors.Is(err, ErrNoKey) {
		t.Fatalf("a value normalized to empty: err = %v, want ErrNoKey", err)
	}
}
