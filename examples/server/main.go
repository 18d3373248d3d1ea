package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// shutdownTimeout bounds how long a graceful shutdown waits for requests in flight.
const shutdownTimeout = 10 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return
	case err != nil:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run parses args, serves until ctx ends and then shuts down gracefully. Logs go
// to stdout as slog text; a flag error and the usage go to stderr, never into the
// log stream.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: cfg.logLevel}))
	if cfg.store == "redis" {
		// go-redis has one logger per process; the server is the process.
		goredis.SetLogger(goRedisLogger{logger})
	}
	warnOfTrustInEveryAddress(cfg.trustedProxies, logger)
	a, err := newApp(cfg, logger, hooks{})
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w", cfg.addr, err)
	}
	srv := newHTTPServer(cfg, a.handler, logger)
	logger.Info("listening", "addr", ln.Addr().String(), "router", cfg.router, "store", cfg.store, "policy", a.api.String(),
		"trusted_proxies", len(cfg.trustedProxies), "forwarded_header", cfg.forwardedHeader.String(), "api_keys", len(cfg.apiKeys))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// readHeaderTimeout bounds how long a client may take to send its headers.
const readHeaderTimeout = 5 * time.Second

// newHTTPServer is the http.Server of cfg: a client that stalls its headers, its
// body or its reading of the answer is cut off after the timeouts, so stalled
// connections cannot pile up. Its own errors (TLS handshakes, timeouts) are
// logged at debug, a handler's panic at error (serverErrorLog).
func newHTTPServer(cfg config, handler http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: min(readHeaderTimeout, cfg.readTimeout),
		ReadTimeout:       cfg.readTimeout,
		WriteTimeout:      cfg.writeTimeout,
		IdleTimeout:       cfg.idleTimeout,
		ErrorLog:          serverErrorLog(logger),
	}
}
