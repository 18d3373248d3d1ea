package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/limiters"
)

// serverCPU returns the CPU time, in seconds, the redis-server at addr has used
// (used_cpu_user + used_cpu_sys of INFO cpu).
func serverCPU(ctx context.Context, addr string) (float64, error) {
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	info, err := client.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO cpu: %w", err)
	}
	var total float64
	found := 0
	for _, line := range strings.Split(info, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "used_cpu_user" && name != "used_cpu_sys") {
			continue
		}
		seconds, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s: %w", name, err)
		}
		total += seconds
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("INFO cpu: used_cpu_user or used_cpu_sys missing")
	}
	return total, nil
}

// counting is a Limiter that counts every decision its workers make, across all the
// runs of a testing.Benchmark, to share the server's CPU time among them.
type counting struct {
	limiters.Limiter
	decisions *atomic.Int64
}

func (c counting) Worker() limiters.Decider {
	decide := c.Limiter.Worker()
	return func(ctx context.Context, key string) (bool, error) {
		c.decisions.Add(1)
		return decide(ctx, key)
	}
}
