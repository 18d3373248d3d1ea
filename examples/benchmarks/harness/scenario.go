package harness

import (
	"fmt"
)

// Kind is what a scenario exercises.
type Kind string

// The kinds of scenario.
const (
	KindMemory Kind = "memory"
	KindRedis  Kind = "redis"
	KindHTTP   Kind = "http"
)

// RedisGoroutines is how many goroutines the Redis scenarios and the over-grant
// check run.
const RedisGoroutines = 64

// Scenario is one workload.
type Scenario struct {
	// Name is short and unique ("memory/serial").
	Name string
	Kind Kind
	// Parallel runs the workload under b.RunParallel.
	Parallel bool
	// Goroutines is the total number of goroutines when Parallel (0: GOMAXPROCS).
	Goroutines int
	// Keys is the keys the workload cycles through; each goroutine starts at its own
	// offset. One key means a hot key.
	Keys []string
}

// Distinct keys of the many-key scenarios.
const (
	MemoryKeys = 100_000
	RedisUsers = 10_000
)

// Keys returns n distinct keys "user-0" .. "user-<n-1>", and fails if they are not
// distinct (a benchmark that claims n keys must use n keys).
func Keys(n int) ([]string, error) {
	keys := make([]string, n)
	seen := make(map[string]struct{}, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
		seen[keys[i]] = struct{}{}
	}
	if len(seen) != n {
		return nil, fmt.Errorf("harness: %d keys requested, %d distinct", n, len(seen))
	}
	return keys, nil
}

// Scenarios returns every scenario, in the order the table shows them.
func Scenarios() ([]Scenario, error) {
	memoryKeys, err := Keys(MemoryKeys)
	if err != nil {
		return nil, err
	}
	users, err := Keys(RedisUsers)
	if err != nil {
		return nil, err
	}
	hot := []string{"hot"}
	return []Scenario{
		{Name: "memory/serial", Kind: KindMemory, Keys: hot},
		{Name: "memory/parallel-hot-key", Kind: KindMemory, Parallel: true, Keys: hot},
		{Name: "memory/parallel-100k-keys", Kind: KindMemory, Parallel: true, Keys: memoryKeys},
		{Name: "redis/hot-key-64", Kind: KindRedis, Parallel: true, Goroutines: RedisGoroutines, Keys: hot},
		{Name: "redis/per-user-64", Kind: KindRedis, Parallel: true, Goroutines: RedisGoroutines, Keys: users},
		{Name: "http/serial", Kind: KindHTTP, Keys: []string{"203.0.113.9:4242"}},
		{Name: "http/parallel", Kind: KindHTTP, Parallel: true, Keys: []string{"203.0.113.9:4242"}},
	}, nil
}
