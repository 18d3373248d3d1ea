package main

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

func loginForm(user, password string) url.Values {
	return url.Values{"username": {user}, "password": {password}}
}

func TestLoginStack(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			attacker := client(t, "127.0.0.1") // subnet 127.0.0.0/24
			fresh := client(t, "127.0.1.1")    // another /24
			login := srv.url + "/login"

			// Twenty accounts from one IP: each admitted (and answered 401).
			for i := 1; i <= 20; i++ {
				r := do(t, attacker, http.MethodPost, login, loginForm(fmt.Sprintf("user%02d", i), "guess"))
				if r.status != http.StatusUnauthorized {
					t.Fatalf("account %d from one IP: %d, want 401 (admitted, wrong password)", i, r.status)
				}
				want := fmt.Sprintf(`"account";r=4;t=60, "ip";r=%d;t=60, "subnet";r=%d;t=60`, 20-i, 100-i)
				if got := r.header.Get("RateLimit"); got != want {
					t.Fatalf("account %d: RateLimit %q\nwant %q", i, got, want)
				}
			}
			// The 21st is refused by the IP policy alone.
			r := do(t, attacker, http.MethodPost, login, loginForm("user21", "guess"))
			if r.status != http.StatusTooManyRequests {
				t.Fatalf("21st account: %d, want 429", r.status)
			}
			if p := r.problem(t); len(p.Violated) != 1 || p.Violated[0] != "ip" {
				t.Fatalf("21st account refused by %v, want [ip]", p.Violated)
			}
			if got, want := r.header.Get("RateLimit-Policy"), `"account";q=5;w=60, "ip";q=20;w=60, "subnet";q=100;w=60`; got != want {
				t.Errorf("RateLimit-Policy %q", got)
			}
			// Attempts at alice from that IP are refused and spend none of her budget.
			for range 3 {
				r := do(t, attacker, http.MethodPost, login, loginForm("alice", loginPassword))
				if r.status != http.StatusTooManyRequests {
					t.Fatalf("alice from the exhausted IP: %d, want 429", r.status)
				}
				if got := r.header.Get("RateLimit"); got[:len(`"account";r=5;`)] != `"account";r=5;` {
					t.Fatalf("alice's account charged by a refused stack: %q", got)
				}
			}
			// So alice from a fresh subnet still has all 5 attempts, and no more.
			for i := 1; i <= 5; i++ {
				r := do(t, fresh, http.MethodPost, login, loginForm("alice", loginPassword))
				if r.status != http.StatusOK || r.body != "welcome\n" {
					t.Fatalf("alice attempt %d from a fresh subnet: %d %q, want 200", i, r.status, r.body)
				}
			}
			r = do(t, fresh, http.MethodPost, login, loginForm("alice", loginPassword))
			if r.status != http.StatusTooManyRequests {
				t.Fatalf("alice's 6th attempt: %d, want 429", r.status)
			}
			if p := r.problem(t); len(p.Violated) != 1 || p.Violated[0] != "account" {
				t.Fatalf("alice's 6th attempt refused by %v, want [account]", p.Violated)
			}
		})
	}
}
