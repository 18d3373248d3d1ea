package nethttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// statusWriter records the status of the response it writes, for costs settled
// after the handler. Unwrap lets http.ResponseController reach the underlying
// writer's optional interfaces; Flush, Hijack, CloseNotify and ReadFrom answer the
// type assertions of handlers written before it (streaming, WebSocket upgrades,
// gin's c.Stream, io.Copy's sendfile).
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the first final status and passes it on.
func (w *statusWriter) WriteHeader(code int) {
	// 1xx responses are informational, but for 101, which switches protocols.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
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

// CloseNotify is the underlying writer's channel that receives when the client
// goes away, or one that never does. gin's c.Stream asserts http.CloseNotifier
// without checking: wrapped in this writer, server-sent events answered 500
// (TestSettledGinStream).
func (w *statusWriter) CloseNotify() <-chan bool {
	//lint:ignore SA1019 deprecated, but gin's c.Stream still asserts it
	if notifier, ok := w.ResponseWriter.(http.CloseNotifier); ok {
		return notifier.CloseNotify()
	}
	return make(chan bool)
}

// ReadFrom copies r to the response, through the underlying writer's ReadFrom
// when it has one (sendfile for a file).
func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
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
