package limiters

import "net/http"

// discardWriter is an http.ResponseWriter that keeps the header map and drops the
// body, so that a benchmark measures the middleware and not a recorder.
type discardWriter struct {
	header http.Header
	status int
}

func newDiscardWriter() *discardWriter { return &discardWriter{header: make(http.Header)} }

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

func (w *discardWriter) WriteHeader(status int) { w.status = status }

// ResponseWriter is a reusable http.ResponseWriter that drops the body; Reset clears
// it between requests without allocating, as a server's fresh writer would be.
type ResponseWriter struct{ discardWriter }

// NewResponseWriter returns an empty ResponseWriter.
func NewResponseWriter() *ResponseWriter {
	return &ResponseWriter{discardWriter{header: make(http.Header)}}
}

// Reset clears the header fields and status of the previous request.
func (w *ResponseWriter) Reset() {
	clear(w.header)
	w.status = 0
}

// Status is the status written, 200 when the handler wrote none.
func (w *ResponseWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
