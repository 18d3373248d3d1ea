package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// config is the server's validated command line.
type config struct {
	addr         string
	router       string
	store        string
	redisAddrs   []string
	algorithm    core.Algorithm
	limit        int64
	period       time.Duration
	burst        int64 // 0: the limit
	onStoreError string
	// replicas is how many instances of the server share the Redis store: in its
	// failure mode each enforces 1/replicas of every policy.
	replicas       int
	trustedProxies []netip.Prefix
	// forwardedHeader is the one forwarding header the trusted proxies set.
	forwardedHeader keyfuncs.Header
	// apiKeys are the API keys the server accepts.
	apiKeys []string
	// logLevel is the least level logged.
	logLevel slog.Level
	// The http.Server's timeouts: a client that stalls its headers or body, or
	// does not read the answer, is cut off.
	readTimeout, writeTimeout, idleTimeout time.Duration
}

// The defaults of the server's timeouts. The write timeout outlives the longest
// export (5 s).
const (
	defaultReadTimeout  = 10 * time.Second
	defaultWriteTimeout = 30 * time.Second
	defaultIdleTimeout  = 60 * time.Second
)

// defaultBurst is the burst of the default policy (-limit 10 -period 1s -burst 20).
const defaultBurst = 20

// hasBurst reports whether an algorithm takes a burst distinct from its limit.
func hasBurst(a core.Algorithm) bool {
	return a == core.TokenBucket || a == core.GCRA || a == core.LeakyBucket
}

// The values the enumerated flags accept.
const (
	routers      = "nethttp|chi|gin|echo"
	stores       = "memory|redis|embedded"
	storeErrors  = "open|closed|local"
	rateAlgNames = "token_bucket|gcra|fixed_window|sliding_log|sliding_window|leaky_bucket"
	fwdHeaders   = "x-forwarded-for|forwarded|x-real-ip"
	logLevels    = "debug|info|warn|error"
)

// parseFlags parses and validates the command line. Usage goes to output.
func parseFlags(args []string, output io.Writer) (config, error) {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(output)
	var (
		cfg        config
		redisAddrs string
		algorithm  string
		trusted    string
		forwarded  string
		apiKeys    string
		logLevel   string
	)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&cfg.router, "router", "chi", "router: "+routers)
	fs.StringVar(&cfg.store, "store", "memory", "store: "+stores)
	fs.StringVar(&redisAddrs, "redis-addrs", "", "Redis host:port[,host:port] (several: Redis Cluster; a Cluster's single endpoint twice), for -store redis")
	fs.StringVar(&algorithm, "algorithm", "token_bucket", "algorithm of policy \"api\": "+rateAlgNames)
	fs.Int64Var(&cfg.limit, "limit", 10, "limit of policy \"api\" per period")
	fs.DurationVar(&cfg.period, "period", time.Second, "period of policy \"api\"")
	fs.Int64Var(&cfg.burst, "burst", 0, fmt.Sprintf("burst of policy \"api\" for token_bucket, gcra and leaky_bucket (default %d with the default -limit, else the limit)", defaultBurst))
	fs.StringVar(&cfg.onStoreError, "on-store-error", "local", "what a store failure does: "+storeErrors)
	fs.IntVar(&cfg.replicas, "replicas", 1, "how many instances of this server share -store redis: while Redis fails, each enforces 1/N of every policy and of each client's last answer")
	fs.StringVar(&trusted, "trusted-proxies", "", "CIDR[,CIDR] of your reverse proxies (default none: only the TCP peer counts)")
	fs.StringVar(&forwarded, "forwarded-header", "x-forwarded-for", "the one forwarding header the trusted proxies set: "+fwdHeaders)
	fs.StringVar(&apiKeys, "api-keys", "demo-key", "k1,k2,...: the API keys the server accepts")
	fs.StringVar(&logLevel, "log-level", "info", "least level logged: "+logLevels+" (decisions are logged at debug)")
	fs.DurationVar(&cfg.readTimeout, "read-timeout", defaultReadTimeout, "how long a client may take to send a whole request, body included")
	fs.DurationVar(&cfg.writeTimeout, "write-timeout", defaultWriteTimeout, "how long a response may take, from the end of the request headers")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", defaultIdleTimeout, "how long an idle keep-alive connection stays open")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if err := checkListenAddress(cfg.addr); err != nil {
		return config{}, fmt.Errorf("-addr %q: want host:port: %w", cfg.addr, err)
	}
	if !oneOf(cfg.router, routers) {
		return config{}, fmt.Errorf("-router %q: want one of %s", cfg.router, strings.ReplaceAll(routers, "|", ", "))
	}
	if !oneOf(cfg.store, stores) {
		return config{}, fmt.Errorf("-store %q: want one of %s", cfg.store, strings.ReplaceAll(stores, "|", ", "))
	}
	if !oneOf(algorithm, rateAlgNames) {
		return config{}, fmt.Errorf("-algorithm %q: want one of %s", algorithm, strings.ReplaceAll(rateAlgNames, "|", ", "))
	}
	cfg.algorithm = core.Algorithm(algorithm)
	if cfg.limit < 1 {
		return config{}, fmt.Errorf("-limit %d: want at least 1", cfg.limit)
	}
	if cfg.period <= 0 {
		return config{}, fmt.Errorf("-period %v: want a positive duration", cfg.period)
	}
	burstSet, limitSet := false, false
	fs.Visit(func(f *flag.Flag) {
		burstSet = burstSet || f.Name == "burst"
		limitSet = limitSet || f.Name == "limit"
	})
	if burstSet && cfg.burst < 1 {
		return config{}, fmt.Errorf("-burst %d: want at least 1", cfg.burst)
	}
	// DESIGN.md's default policy is 10 per second with a burst of 20; a burst that is
	// not given otherwise defaults to the limit.
	if !burstSet && !limitSet && hasBurst(cfg.algorithm) {
		cfg.burst = defaultBurst
	}
	if redisAddrs != "" {
		for _, a := range strings.Split(redisAddrs, ",") {
			if a = strings.TrimSpace(a); a == "" {
				continue
			}
			if err := redisstore.CheckAddress(a); err != nil {
				return config{}, fmt.Errorf("-redis-addrs %q: want host:port: %w", a, err)
			}
			cfg.redisAddrs = append(cfg.redisAddrs, a)
		}
	}
	switch {
	case cfg.store == "redis" && len(cfg.redisAddrs) == 0:
		return config{}, errors.New("-store redis needs -redis-addrs host:port[,host:port]")
	case cfg.store != "redis" && len(cfg.redisAddrs) > 0:
		return config{}, fmt.Errorf("-redis-addrs is only for -store redis (the store is %s)", cfg.store)
	}
	switch {
	case cfg.replicas < 1:
		return config{}, fmt.Errorf("-replicas %d: want at least 1", cfg.replicas)
	case cfg.replicas > 1 && cfg.store != "redis":
		return config{}, fmt.Errorf("-replicas is only for -store redis (the store is %s, which replicas do not share)", cfg.store)
	}
	if !oneOf(cfg.onStoreError, storeErrors) {
		return config{}, fmt.Errorf("-on-store-error %q: want one of %s", cfg.onStoreError, strings.ReplaceAll(storeErrors, "|", ", "))
	}
	if trusted != "" {
		prefixes, err := keyfuncs.ParseTrustedProxies(trusted)
		if err != nil {
			return config{}, fmt.Errorf("-trusted-proxies: %w", err)
		}
		cfg.trustedProxies = prefixes
	}
	if !oneOf(forwarded, fwdHeaders) {
		return config{}, fmt.Errorf("-forwarded-header %q: want one of %s", forwarded, strings.ReplaceAll(fwdHeaders, "|", ", "))
	}
	header, err := keyfuncs.ParseHeader(forwarded)
	if err != nil {
		return config{}, fmt.Errorf("-forwarded-header: %w", err)
	}
	cfg.forwardedHeader = header
	for _, k := range strings.Split(apiKeys, ",") {
		if k = strings.TrimSpace(k); k != "" {
			cfg.apiKeys = append(cfg.apiKeys, k)
		}
	}
	if !oneOf(logLevel, logLevels) {
		return config{}, fmt.Errorf("-log-level %q: want one of %s", logLevel, strings.ReplaceAll(logLevels, "|", ", "))
	}
	if err := cfg.logLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return config{}, fmt.Errorf("-log-level: %w", err)
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"read-timeout", cfg.readTimeout}, {"write-timeout", cfg.writeTimeout}, {"idle-timeout", cfg.idleTimeout}} {
		if d.value <= 0 {
			return config{}, fmt.Errorf("-%s %v: want a positive duration", d.name, d.value)
		}
	}
	return cfg, nil
}

// checkListenAddress reports why addr cannot be listened on as TCP host:port: a
// missing or out-of-range port. The host may be empty (every interface) and the
// port 0 (any free port) or a service name, as net.Listen takes them.
func checkListenAddress(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("port %q: %w", port, err)
	}
	return nil
}

// oneOf reports whether v is one of the "|"-separated values of allowed.
func oneOf(v, allowed string) bool {
	for _, a := range strings.Split(allowed, "|") {
		if v == a {
			return true
		}
	}
	return false
}
