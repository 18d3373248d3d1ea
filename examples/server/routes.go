package main

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes are the server's handlers, shared by every router. None of them knows
// about rate limiting: the routers put the limiters in front of them.
type routes struct {
	healthz, resource, report, export, login, metrics http.Handler
}

func newRoutes(registry *prometheus.Registry, exportStarted func(), validKey keyfuncs.APIKeyValidator) routes {
	return routes{
		healthz:  text("ok"),
		resource: requireKnownKey(validKey, text("resource")),
		report:   requireKnownKey(validKey, text("report")),
		export:   exportHandler(exportStarted),
		login:    http.HandlerFunc(login),
		metrics:  promhttp.HandlerFor(registry, promhttp.HandlerOpts{}),
	}
}

// text answers 200 with body and a newline.
func text(body string) http.Handler {
	body += "\n"
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, body)
	})
}

// exportHandler works for ?ms=N milliseconds (at most exportMaxMillis), stopping
// early when the client goes away.
func exportHandler(started func()) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms := int64(0)
		if v := r.URL.Query().Get("ms"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				http.Error(w, "ms must be a whole number of milliseconds", http.StatusBadRequest)
				return
			}
			ms = min(n, exportMaxMillis)
		}
		if started != nil {
			started()
		}
		if err := sleep(r.Context(), time.Duration(ms)*time.Millisecond); err != nil {
			return // the client is gone: nobody to answer
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "exported in "+strconv.FormatInt(ms, 10)+" ms\n")
	})
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// problemUnknownKey is the body of the 401 for an API key the server does not accept.
const problemUnknownKey = `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"The API key is not valid."}`

// requireKnownKey answers 401 with a problem body to a request whose X-API-Key the
// server does not accept. The limiter in front of it has already charged such a
// request to its client address, so a client guessing keys gets 429 once that
// budget is spent. Requests without a key pass.
func requireKnownKey(valid keyfuncs.APIKeyValidator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := strings.TrimSpace(r.Header.Get(apiKeyHeader)); key != "" {
			if ok, err := valid(r.Context(), key); err != nil || !ok {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, problemUnknownKey)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// login accepts the password "correct-horse" for any username. It reads the form
// from the body only, and looks the account up by its normalised name, as the
// rate limit's key function does (keyfuncs.FormUsername): "Alice" is alice.
func login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !isForm(r.Header.Get("Content-Type")) {
		// A JSON or untyped body is not a form: 400, not a 401 for the missing fields.
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "the body is not a form (application/x-www-form-urlencoded or multipart/form-data)\n")
		return
	}
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "the form cannot be parsed\n")
		return
	}
	username, err := keyfuncs.NormalizeUsername(r.PostFormValue("username"))
	if err != nil && r.PostFormValue("username") != "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "invalid username\n")
		return
	}
	if username == "" || r.PostFormValue("password") != loginPassword {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "wrong username or password\n")
		return
	}
	_, _ = io.WriteString(w, "welcome\n")
}

// isForm reports whether contentType is one of the form encodings net/http parses.
func isForm(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mediaType == "application/x-www-form-urlencoded" || mediaType == "multipart/form-data")
}
