package keyfuncs

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRouteThroughServeMux(t *testing.T) {
	mux := http.NewServeMux()
	var got string
	var gotErr error
	record := func(w http.ResponseWriter, r *http.Request) { got, gotErr = Route()(r) }
	mux.HandleFunc("GET /items/{id}", record)
	mux.HandleFunc("/files/", record)
	mux.HandleFunc("POST example.com/upload", record)

	cases := []struct {
		method, target, want string
	}{
		{"GET", "/items/42", "route:GET /items/{id}"},
		{"GET", "/items/43", "route:GET /items/{id}"},
		{"HEAD", "/items/42", "route:GET /items/{id}"}, // the pattern's method: HEAD is served as GET
		{"DELETE", "/files/a/b", "route:/files/"},      // a pattern without a method: one budget
		{"GET", "/files/c", "route:/files/"},
		{"A0", "/files/c", "route:/files/"}, // a method the client made up earns nothing new
		{"POST", "http://example.com/upload", "route:POST example.com/upload"},
	}
	for _, tc := range cases {
		got, gotErr = "", nil
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.target, nil))
		if gotErr != nil || got != tc.want {
			t.Errorf("%s %s: Route = %q, %v; want %q", tc.method, tc.target, got, gotErr, tc.want)
		}
	}
}

func TestRouteWithoutPattern(t *testing.T) {
	if _, err := Route()(httptest.NewRequest("GET", "/x", nil)); !errors.Is(err, ErrNoKey) {
		t.Fatalf("err = %v, want ErrNoKey", err)
	}
}

func TestRoutePattern(t *testing.T) {
	pattern := ""
	route := RoutePattern(func(*http.Request) string { return pattern })
	for _, tc := range []struct{ pattern, want string }{
		{"/users/{id}", "route:/users/{id}"},
		{"/a|b", "route:" + hashed("/a|b")},
		{"GET\t/tabbed", "route:GET /tabbed"},
		{"POST  /spaced", "route:POST /spaced"},
		{"/with space/x", "route:/with space/x"},
	} {
		pattern = tc.pattern
		if key, err := route(httptest.NewRequest("GET", "/", nil)); err != nil || key != tc.want {
			t.Errorf("pattern %q: key %q, %v; want %q", tc.pattern, key, err, tc.want)
		}
	}
}
