package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestLocalStackIsSettledOnReturn and TestRefusedStackOnReturnLeavesTheShortMemberSpent
// on real Redis. A login stack (account 5 a minute, IP 20 a minute, subnet 2 a
// window) is admitted once by Redis; Redis fails (hung: SIGSTOP, its data kept;
// dead: SIGKILL, restarted empty) and, once the breaker is open, Local mode admits
// the 1 more stack its subnet had left and refuses 2. Back on Redis, which never saw
// the local one, the stack is refused by the subnet, with a Retry-After and nothing
// admitted. What Redis holds is then read through a second replica, which decided
// nothing before:
//
//   - the subnet admits 0 of 3: it spent its 2, 1 on Redis and 1 in memory. The
//     refused stack keeps the subnet's charge (or, on the emptied server, the
//     settlement charges it); refunding it let a third request through;
//   - the account admits 3 of 5: it spent 1 on Redis and 1 in memory. The refused
//     stack's charge was refunded and the local admission charged; keeping the
//     charge admits 2, not charging the local admission 4.
func TestRedisLocalStackIsSettledOnReturn(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := redistest.StartServer(t)
			sub := subnetWindow()
			stack := []core.Request{
				{Policy: account, Key: "form:username:alice"},
				{Policy: loginIP, Key: "ip:192.0.2.1"},
				{Policy: sub, Key: "net4:192.0.2.0/24"},
			}
			settleStackOnReturn(t, []string{srv.Addr}, stack, func() error { return f.inject(srv) }, func() error { return f.recover(srv) })
		})
	}
}

// TestRedisClusterLocalStackIsSettledOnReturn is TestRedisLocalStackIsSettledOnReturn
// on a 3-master Cluster whose masters all hang (SIGSTOP, for less than the node
// timeout), with the account, the IP and the subnet each on its own master: back on
// Redis, the stack is charged across the masters, and the refused stack's refunds
// and settling charges go to each member's master.
func TestRedisClusterLocalStackIsSettledOnReturn(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	sub := subnetWindow()
	stack := []core.Request{
		{Policy: account, Key: clusterKey(t, c, account, 0, "form:username:alice")},
		{Policy: loginIP, Key: clusterKey(t, c, loginIP, 1, "ip:192.0.2.")},
		{Policy: sub, Key: clusterKey(t, c, sub, 2, "net4:192.0.")},
	}
	each := func(do func(*redistest.Server) error) func() error {
		return func() error {
			var errs []error
			for _, s := range c.Servers {
				errs = append(errs, do(s))
			}
			return errors.Join(errs...)
		}
	}
	settleStackOnReturn(t, c.Addrs(), stack, each((*redistest.Server).Pause), each((*redistest.Server).Resume))
}

// subnetWindow is the login stack's subnet policy for a test on real time: 2 per
// fixed window of about an hour. Windows are [k × period, (k+1) × period) since the
// Unix epoch, in Redis and in the memory store alike; the period is chosen so that
// the window open now began within the last k milliseconds (k ≈ 490,000, about 8
// minutes, in 2026), so the test's seconds stay inside one window, as the in-memory
// tests' virtual minute does. A minute window would end during 1 run in 12.
func subnetWindow() core.Policy {
	now := time.Now().UnixMilli()
	k := now / time.Hour.Milliseconds()
	return core.MustPolicy("login-subnet", core.FixedWindow, core.Rate{Limit: 2, Period: time.Duration(now/k) * time.Millisecond})
}

// settleStackOnReturn runs TestRedisLocalStackIsSettledOnReturn's scenario on the
// Redis at addrs, which inject makes fail and restore brings back; stack is the
// account, the IP and the subnet.
func settleStackOnReturn(t *testing.T, addrs []string, stack []core.Request, inject, restore func() error) {
	stores := dialStores(t, addrs, 2)
	a, b := stores[0], stores[1] // b decides nothing until the end
	ctx := context.Background()
	results := make([]core.Result, len(stack))
	admits := func(n int) int {
		t.Helper()
		admitted := 0
		for i := 0; i < n; i++ {
			ok, err := a.DecideStack(ctx, stack, results)
			if err != nil {
				t.Fatalf("stack %d: %v", i, err)
			}
			if ok {
				admitted++
			}
		}
		return admitted
	}
	if got := admits(1); got != 1 {
		t.Fatalf("healthy: %d admitted, want 1", got)
	}
	if err := inject(); err != nil {
		t.Fatal(err)
	}
	openBreaker(t, a)
	if got := admits(3); got != 1 {
		t.Fatalf("local mode admitted %d stacks, want the 1 the subnet had left", got)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "recovery", func() bool { return a.Breaker() == resilient.BreakerClosed && !a.Fallback("login-subnet") })

	ok, err := a.DecideStack(ctx, stack, results)
	if err != nil || ok {
		t.Fatalf("back on Redis: admitted %v, %v; want refused: the subnet's 2 were spent, 1 in memory", ok, err)
	}
	if results[2].RetryAfter <= 0 || results[0].Allowed || results[1].Allowed || results[2].Allowed {
		t.Errorf("refused stack: %+v; want the subnet to refuse with a Retry-After and nothing admitted", results)
	}
	count := func(req core.Request, n int) int {
		t.Helper()
		admitted := 0
		for i := 0; i < n; i++ {
			res, err := b.Decide(ctx, req)
			if err != nil {
				t.Fatalf("%s on Redis: %v", req.Policy.Name(), err)
			}
			if res.Allowed {
				admitted++
			}
		}
		return admitted
	}
	if got := count(stack[2], 3); got != 0 {
		t.Errorf("another replica then admits %d more on the subnet this window, want 0: it spent its 2, 1 on Redis and 1 in memory", got)
	}
	if got := count(stack[0], 5); got != 3 {
		t.Errorf("another replica then admits %d on the account, want 3: it spent 1 on Redis and 1 in memory, and the refused stack's charge is given back", got)
	}
}
