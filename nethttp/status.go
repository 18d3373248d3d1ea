package nethttp

import (
	"bufio"
	"net"
	"net/http"
)

// statusWriter records the status of the response it writes, for costs settled
// after the handler. Unwrap lets http.ResponseController reach the underlying
// writer's optional interfaces; Flush and Hijack answer the type assertions of
// handlers written before it (streaming, WebSocket upgrades).
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

// Hijack hands the connection to the handler, as the underlying writer does (an
// HTTP/2 writer refuses, with an error wrapping http.ErrNotSupported). A hijacked
// response that wrote no status is settled as 101 Switching Protocols.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
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
