package reserve_test

import (
	"context"
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/reserve"
)

// One hot key's policy is leased 50 units at a time; the login policy is not, and
// is decided by the backing store exactly.
func Example() {
	search := core.MustPolicy("search", core.TokenBucket, core.PerSecond(1000))
	login := core.MustPolicy("login", core.SlidingLog, core.PerMinute(5))
	store, err := reserve.New(memory.MustNew(), []reserve.Lease{{Policy: search, Size: 50}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close() // returns what is left of the lease

	ctx := context.Background()
	for range 50 {
		if _, err := store.Decide(ctx, core.Request{Policy: search, Key: "global"}); err != nil {
			fmt.Println(err)
			return
		}
	}
	res, _ := store.Decide(ctx, core.Request{Policy: login, Key: "alice"})
	st := store.Stats()
	fmt.Println("leased:", store.Leased(search), store.Leased(login))
	fmt.Println("50 searches took", st.Leases, "lease of", st.Leased)
	fmt.Println("login remaining:", res.Remaining)
	// Output:
	// leased: true false
	// 50 searches took 1 lease of 50
	// login remaining: 4
}

// A leaky bucket cannot be leased: New says so, naming the policy.
func ExampleNew_refused() {
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(10))
	backing := memory.MustNew()
	defer backing.Close() // New failed: the caller still owns backing
	_, err := reserve.New(backing, []reserve.Lease{{Policy: queue, Size: 5}})
	fmt.Println(err)
	// Output: reserve: ratelimit: invalid policy "queue": leaky_bucket policies cannot be leased: a leaky bucket admits into a shared queue and tells each request how long to wait for its slot, which a replica cannot decide alone
}
