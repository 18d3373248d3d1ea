package main

import (
	"context"
	"log"
	"log/slog"
	"strings"
)

// serverErrorLog is the http.Server's ErrorLog: its lines go to logger at debug,
// since a client can cause most of them at will (TLS handshakes, read timeouts),
// except a handler's panic, which net/http recovers and reports here: that is a bug
// of the server's, logged at error, without the client's address.
func serverErrorLog(logger *slog.Logger) *log.Logger {
	return log.New(levelledWriter{logger}, "", 0)
}

// levelledWriter logs each line the http.Server writes at the level its text calls for.
type levelledWriter struct{ logger *slog.Logger }

// panicPrefix starts the line net/http writes for a handler's recovered panic.
const panicPrefix = "http: panic serving "

// Write logs line, one message of the server's.
func (w levelledWriter) Write(line []byte) (int, error) {
	msg := strings.TrimSuffix(string(line), "\n")
	level := slog.LevelDebug
	if rest, ok := strings.CutPrefix(msg, panicPrefix); ok {
		// "http: panic serving ADDR: VALUE\nSTACK": the client's address stays out of
		// a log above debug.
		if _, panicked, ok := strings.Cut(rest, ": "); ok {
			msg = "http: panic serving a request: " + panicked
		}
		level = slog.LevelError
	}
	w.logger.Log(context.Background(), level, msg)
	return len(line), nil
}
