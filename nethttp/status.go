package nethttp

import "net/http"

// statusWriter records the status of the response it writes, for costs settled
// after the handler. Unwrap lets http.ResponseController reach the underlying
// writer's optional interfaces.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the first final status and passes it on.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx responses are informational
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and passes b on.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client when the underlying writer can.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status is the status written so far; 200 when the handler wrote nothing, as
// net/http then answers 200.
func (w *statusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
