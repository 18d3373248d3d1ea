package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/prometheus/client_golang/prometheus"
)

// The fixed parts of the reference server's policies (DESIGN.md, "Routes").
const (
	reportCost        = 5
	exportMaxInFlight = 2
	exportLeaseExpiry = 30 * time.Second // outlives the longest export (5 s) by far
	exportMaxMillis   = 5000
	loginPassword     = "correct-horse"
	apiKeyHeader      = "X-API-Key"
)

// maxBodyBytes bounds every request body: a login form is a few hundred bytes.
const maxBodyBytes = 64 << 10

// hooks are what tests inject into the server; production leaves them zero.
type hooks struct {
	clock           func() time.Time // the store's clock; nil means the store's own
	exportStarted   func()           // called when an export starts its work
	summaryInterval time.Duration    // how often logs summarise; 0 means defaultSummaryInterval
}

// app is the reference server's handler with what it owns.
type app struct {
	handler http.Handler
	store   core.Store
	logs    *logObserver
	api     core.Policy    // the "api" policy the flags describe
	login   [3]core.Policy // the login stack's: account, ip and subnet
}

// Close stops the log summaries (writing the last one) and releases the store.
func (a *app) Close() error {
	a.logs.Close()
	return a.store.Close()
}

// limiters are the per-route limits, on one store, that every router applies,
// so that all four routers enforce the very same configuration.
type limiters struct {
	store                      core.Store
	api, report, export, login routeLimit
	apiPolicy                  core.Policy
	loginPolicies              [3]core.Policy           // account, ip, subnet
	validKey                   keyfuncs.APIKeyValidator // accepts the -api-keys
}

// routeLimit is what one route is limited by, for the router to apply.
type routeLimit struct {
	limits  httplimit.Limits
	options []httplimit.Option
}

// unknownPeerKey is the one key of the clients whose address cannot be found,
// as httplimit.ClientIPFallback(nil) keys them too.
const unknownPeerKey = "ip:unknown"

// newApp builds the store, the policies and the router that cfg describes.
func newApp(cfg config, logger *slog.Logger, h hooks) (*app, error) {
	registry := prometheus.NewRegistry()
	metrics, err := prommetrics.New(registry, prommetrics.WithPolicies(policyNames...))
	if err != nil {
		return nil, err
	}
	store, err := openStore(cfg, h.clock, logger, metrics)
	if err != nil {
		return nil, err
	}
	// prommetrics counts; logObserver does the logging, so that a flood of
	// refusals is summarised rather than logged line by line.
	logs := newLogObserver(logger, h.summaryInterval)
	lims, err := newLimiters(cfg, store, observers{metrics.HTTPObserver(), logs}, logger)
	if err != nil {
		logs.Close()
		store.Close()
		return nil, err
	}
	handler, err := newRouter(cfg.router, lims, newRoutes(registry, h.exportStarted, lims.validKey))
	if err != nil {
		logs.Close()
		store.Close()
		return nil, err
	}
	return &app{handler: boundBodies(handler), store: store, logs: logs, api: lims.apiPolicy, login: lims.loginPolicies}, nil
}

// boundBodies caps every request body at maxBodyBytes, before any limiter or
// handler reads it: a larger form gets 413, and parsing it costs little.
func boundBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// openStore opens the store cfg names. The memory store cannot fail; a Redis store
// (real or embedded) is wrapped in the failure mode of -on-store-error, with its
// metrics, and probed once so that a permanent misconfiguration fails the start; a
// real Redis that evicts keys is logged at warn.
func openStore(cfg config, clock func() time.Time, logger *slog.Logger, metrics *prommetrics.Metrics) (core.Store, error) {
	var shared core.Store
	var err error
	switch cfg.store {
	case "memory":
		var options []memory.Option
		if clock != nil {
			options = append(options, memory.WithClock(clock))
		}
		return memory.New(options...)
	case "embedded":
		var options []redisstore.Option
		if clock != nil {
			options = append(options, redisstore.WithClock(clock))
		}
		shared, err = embedded.New(options...)
	case "redis":
		var store *redisstore.Store
		if store, err = redisstore.Dial(cfg.redisAddrs); err == nil {
			warnIfEvicting(store, logger)
			shared = store
		}
	default:
		return nil, fmt.Errorf("-store %q: unknown store", cfg.store)
	}
	if err != nil {
		return nil, err
	}
	return withFailureMode(cfg, shared, clock, logger, metrics)
}

// warnIfEvicting logs at warn when a Redis server may delete rate-limit state
// before it expires (redisstore.Store.CheckEviction), or cannot be asked whether it
// may: the server runs either way.
func warnIfEvicting(store *redisstore.Store, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), startupCheckTimeout)
	defer cancel()
	switch err := store.CheckEviction(ctx); {
	case errors.Is(err, redisstore.ErrEvicts):
		logger.Warn("Redis may delete rate-limit state before it expires, handing those clients their whole limit again", "error", err)
	case err != nil:
		logger.Warn("could not ask Redis whether it evicts rate-limit state", "error", err)
	}
}

// withFailureMode wraps the shared store in -on-store-error's mode.
// A test's clock drives the failure mode's local store and pre-limiter too.
func withFailureMode(cfg config, shared core.Store, clock func() time.Time, logger *slog.Logger, metrics *prommetrics.Metrics) (core.Store, error) {
	mode, err := resilient.ParseMode(cfg.onStoreError)
	if err != nil {
		shared.Close()
		return nil, fmt.Errorf("-on-store-error: %w", err)
	}
	options := []resilient.Option{resilient.WithMode(mode), resilient.WithStoreName(cfg.store),
		resilient.WithMonitor(metrics), resilient.WithLogger(logger), resilient.WithReplicas(cfg.replicas)}
	if clock != nil {
		options = append(options, resilient.WithClock(clock))
	}
	store, err := resilient.New(shared, options...)
	if err != nil {
		shared.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startupCheckTimeout)
	defer cancel()
	if err := store.Check(ctx); err != nil {
		if why := misaddressed(cfg, err); why != "" {
			store.Close()
			return nil, fmt.Errorf("-redis-addrs %s %s: %w", cfg.redisAddrs[0], why, err)
		}
		if errors.Is(err, resilient.ErrPermanent) {
			store.Close()
			return nil, fmt.Errorf("-store %s: %w", cfg.store, err)
		}
		logger.Warn("the shared store cannot serve now; starting in the failure mode until it can",
			"store", cfg.store, "on_store_error", cfg.onStoreError, "error", err)
	}
	return store, nil
}

// policyNames are the reference server's policies, for the fallback gauges.
var policyNames = []string{"api", "export", "account", "ip", "subnet"}

// startupCheckTimeout bounds the start-up probe of a Redis store.
const startupCheckTimeout = 5 * time.Second

// newLimiters builds the policies and key functions of DESIGN.md's routes.
func newLimiters(cfg config, store core.Store, obs httplimit.Observer, logger *slog.Logger) (limiters, error) {
	clientIP, err := keyfuncs.NewClientIP(keyfuncs.ClientIPConfig{TrustedProxies: cfg.trustedProxies, Header: cfg.forwardedHeader})
	if err != nil {
		return limiters{}, fmt.Errorf("-trusted-proxies: %w", err)
	}
	subnet, err := clientIP.Subnet(24, 56)
	if err != nil {
		return limiters{}, err
	}
	var options []core.Option
	if cfg.burst > 0 {
		options = append(options, core.WithBurst(cfg.burst))
	}
	api, err := core.NewPolicy("api", cfg.algorithm, core.Rate{Limit: cfg.limit, Period: cfg.period}, options...)
	if err != nil {
		return limiters{}, fmt.Errorf("-algorithm/-limit/-period/-burst: %w", err)
	}
	if api.Capacity() < reportCost {
		return limiters{}, fmt.Errorf("-limit/-burst: /api/report costs %d, but policy %q holds at most %d; give it a capacity of at least %d",
			reportCost, api.Name(), api.Capacity(), reportCost)
	}
	// An admitted request may wait for its leaky-bucket slot (up to the policy's
	// window) and an export works up to exportMaxMillis: the write timeout must
	// outlive both, or the client is charged and then cut off without an answer.
	if api.Algorithm() == core.LeakyBucket && api.Window() >= cfg.writeTimeout {
		return limiters{}, fmt.Errorf("-write-timeout %v: a request may wait up to %v for its slot of policy %q (burst×period/limit); give a write timeout longer than that, or a shorter queue",
			cfg.writeTimeout, api.Window(), api.Name())
	}
	if exportMax := exportMaxMillis * time.Millisecond; exportMax >= cfg.writeTimeout {
		return limiters{}, fmt.Errorf("-write-timeout %v: /api/export works up to %v; give a write timeout longer than that", cfg.writeTimeout, exportMax)
	}
	export := core.MustConcurrencyPolicy("export", exportMaxInFlight, exportLeaseExpiry)
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	perIP := core.MustPolicy("ip", core.SlidingWindow, core.PerMinute(20))
	perSubnet := core.MustPolicy("subnet", core.SlidingWindow, core.PerMinute(100))

	// A request without the identity a policy keys on is limited by its client
	// address (behind the trusted proxies), never let through unlimited.
	fallback := keyfuncs.FirstOf(clientIP.Key, keyfuncs.Const(unknownPeerKey))
	common := []httplimit.Option{
		httplimit.WithObserver(obs),
		httplimit.WithKeyFallback(httplimit.ClientIPFallback(fallback)),
		httplimit.WithLogger(logger), // undecided requests, at error level
	}
	// A key the server accepts has its own bucket; an unknown key is charged to
	// the client address's bucket (and answered 401 by requireKnownKey).
	validKey := keyfuncs.APIKeySet(cfg.apiKeys...)
	byKeyOrIP := keyfuncs.FirstOf(keyfuncs.ValidAPIKey(apiKeyHeader, validKey), clientIP.Key)

	route := func(limits httplimit.Limits, options ...httplimit.Option) routeLimit {
		return routeLimit{limits: limits, options: append(options, common...)}
	}
	return limiters{
		store:  store,
		api:    route(httplimit.Limit(api, byKeyOrIP)),
		report: route(httplimit.Limit(api, byKeyOrIP), httplimit.WithCost(reportCost)),
		export: route(httplimit.Limit(export, clientIP.Key)),
		login: route(httplimit.Stack(
			httplimit.Limit(account, keyfuncs.FormUsername("username")),
			httplimit.Limit(perIP, clientIP.Key),
			httplimit.Limit(perSubnet, subnet),
		)),
		apiPolicy:     api,
		loginPolicies: [3]core.Policy{account, perIP, perSubnet},
		validKey:      validKey,
	}, nil
}

// errUnknownRouter is returned for a -router that newRouter does not know.
var errUnknownRouter = errors.New("unknown router")
