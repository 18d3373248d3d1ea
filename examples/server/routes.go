package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes are the server's handlers, shared by every router. None of them knows
// about rate limiting: the routers put the limiters in front of them.
type routes struct {
	healthz, resource, report, export, login, metrics http.Handler
}

func newRoutes(registry *prometheus.Registry, exportStarted func()) routes {
	return routes{
		healthz:  text("ok"),
		resource: text("resource"),
		report:   text("report"),
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

// login accepts the password "correct-horse" for any username.
func login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.PostFormValue("username") == "" || r.PostFormValue("password") != loginPassword {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "wrong username or password\n")
		return
	}
	_, _ = io.WriteString(w, "welcome\n")
}
