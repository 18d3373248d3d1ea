package main

import (
	"bufio"
	"bytes"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"log/slog"

	"golang.org/x/text/unicode/norm"
)

// The attacks of "identities a client cannot mint", each tried on every router.

// TestInventedAPIKeysAreChargedToTheClient: 60 invented X-API-Key values from one
// client used to get 60 fresh buckets (60 × 200), and any key skipped the per-IP
// limit. Now an unknown key is answered 401 and charged to the client address:
// once its budget is spent, 429.
func TestInventedAPIKeysAreChargedToTheClient(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "10", "-period", "1m")
			c := client(t, "127.0.0.1")
			counts := map[int]int{}
			for i := range 60 {
				r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil, "X-API-Key", fmt.Sprintf("invented-%d", i))
				counts[r.status]++
				if r.status == http.StatusUnauthorized && r.problem(t).Status != http.StatusUnauthorized {
					t.Fatalf("401 without a problem body: %q", r.body)
				}
			}
			t.Logf("60 invented keys: %v", counts)
			if counts[http.StatusOK] != 0 || counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 50 {
				t.Fatalf("60 invented keys: %v, want 10 × 401 then 50 × 429", counts)
			}
			// The per-IP budget they spent is the client's own.
			if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil); r.status != http.StatusTooManyRequests {
				t.Fatalf("no key after the guesses: %d, want 429", r.status)
			}
			// A known key has its own bucket.
			if r := do(t, c, http.MethodGet, srv.url+"/api/resource", nil, "X-API-Key", "demo-key"); r.status != http.StatusOK {
				t.Fatalf("demo-key: %d, want 200", r.status)
			}
		})
	}
}

// TestLoginCountsTheNameTheHandlerChecks: the account limit used to count the
// query's ?username= while the handler checked the body's (a multipart body, as
// curl -F sends). With alice locked, a decoy in the query let her correct
// password through; and rotating decoys let every guess at a password reach the
// handler. A name in the query beside the body's is now refused (400).
func TestLoginCountsTheNameTheHandlerChecks(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			for i := range 5 {
				postMultipart(t, srv.handler, "/login", fmt.Sprintf("192.0.2.%d:1000", i), "alice", "guess")
			}
			r := postMultipart(t, srv.handler, "/login?username=decoy", "192.0.2.9:1000", "alice", loginPassword)
			if r.status != http.StatusBadRequest {
				t.Errorf("alice locked, decoy in the query: %d, want 400", r.status)
			}
			if r := postMultipart(t, srv.handler, "/login", "192.0.2.9:1000", "alice", loginPassword); r.status != http.StatusTooManyRequests {
				t.Errorf("alice locked, her password without a decoy: %d, want 429", r.status)
			}

			// 50 guesses at bob's password from three addresses (so that the
			// per-IP limit alone would let 50 through), every other one with a
			// new decoy.
			reached := 0
			for i := range 50 {
				target := "/login"
				if i%2 == 0 {
					target = fmt.Sprintf("/login?username=decoy%d", i)
				}
				r := postMultipart(t, srv.handler, target, fmt.Sprintf("198.51.100.%d:1000", i%3), "bob", fmt.Sprint("guess", i))
				switch {
				case target != "/login" && r.status == http.StatusBadRequest:
				case target == "/login" && r.status == http.StatusUnauthorized:
					reached++
				case target == "/login" && r.status == http.StatusTooManyRequests:
				default:
					t.Fatalf("guess %d (%s): %d", i, target, r.status)
				}
			}
			t.Logf("50 guesses, every other one with a decoy: %d reached the handler", reached)
			if reached != 5 {
				t.Fatalf("%d of 50 guesses reached the handler under a 5/min account limit", reached)
			}
		})
	}
}

// postMultipart runs one multipart/form-data login through the handler in
// process, from remoteAddr.
func postMultipart(t *testing.T, h http.Handler, target, remoteAddr, username, password string) response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if err := w.WriteField("username", username); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteField("password", password); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, target, &body)
	r.Header.Set("Content-Type", w.FormDataContentType())
	r.RemoteAddr = remoteAddr
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// TestLoginFormNetHTTPRefusesIs400: with more than 10,000 parameters net/http
// gives up parsing, while the old hand-written parser went on, so the limiter and
// the handler read different usernames. Such a form is now answered 400 and
// charged to nobody.
func TestLoginFormNetHTTPRefusesIs400(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			body := strings.Repeat("a=1&", 10_001) + "username=carol&password=guess"
			for i := range 8 {
				r := postLocal(srv.handler, "/login", "192.0.2.7:1000", body)
				if r.status != http.StatusBadRequest {
					t.Fatalf("attempt %d: %d, want 400", i, r.status)
				}
			}
			// carol's budget is untouched.
			if r := postLocal(srv.handler, "/login", "192.0.2.8:1000", loginForm("carol", loginPassword).Encode()); r.status != http.StatusOK {
				t.Fatalf("carol afterwards: %d, want 200", r.status)
			}
		})
	}
}

// TestLoginBodyThatIsNotAFormIs400: DESIGN's login answers 400 for a body that
// cannot be parsed; a JSON body (or one with no Content-Type) is not a form, and got
// 401, as if a username and password had been checked.
func TestLoginBodyThatIsNotAFormIs400(t *testing.T) {
	srv := startServer(t, "chi")
	for _, contentType := range []string{"application/json", "", "text/plain"} {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(`{"username":"alice","password":"correct-horse"}`))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		r.RemoteAddr = "192.0.2.9:1000"
		w := httptest.NewRecorder()
		srv.handler.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest {
			t.Errorf("Content-Type %q: %d %s, want 400", contentType, w.Code, w.Body.String())
		}
	}
}

// checkOneAccount logs in as each of six spellings of one username, each from its own
// address of prefix, with a wrong password and the last with lastPassword: one
// account's five attempts, so five 401s, then 429.
func checkOneAccount(t *testing.T, h http.Handler, prefix string, spellings []string, lastPassword string) {
	t.Helper()
	for i, name := range spellings {
		password := "guess"
		if i == len(spellings)-1 {
			password = lastPassword
		}
		r := postLocal(h, "/login", fmt.Sprintf("%s%d:1000", prefix, 10+i), loginForm(name, password).Encode())
		want := http.StatusUnauthorized
		if i == 5 {
			want = http.StatusTooManyRequests
		}
		if r.status != want {
			t.Fatalf("spelling %d of %.40q (%d bytes): %d, want %d", i, spellings[0], len(name), r.status, want)
		}
	}
}

// TestLoginSpellingsShareOneBudget: Alice, ALICE and aLice, and the NFC and NFD
// spellings of josé, each had their own 5/min budget.
func TestLoginSpellingsShareOneBudget(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router)
			for _, spellings := range [][]string{
				{"alice", "Alice", "ALICE", "aLice", "alICE", "ALIce"},
				{norm.NFC.String("josé"), norm.NFD.String("josé"), norm.NFC.String("JOSÉ"), norm.NFD.String("José"), "jos\u00e9", norm.NFD.String("JOSé")},
			} {
				checkOneAccount(t, srv.handler, "192.0.2.", spellings, loginPassword)
			}
			// The handler knows the account by the same name.
			if r := postLocal(srv.handler, "/login", "192.0.2.99:1000", loginForm("Zoë", loginPassword).Encode()); r.status != http.StatusOK {
				t.Fatalf("Zoë: %d", r.status)
			}
		})
	}
}

// TestTrustedProxyHeaderIsTheOneNamed: behind a proxy that sets only Forwarded
// (or X-Real-IP), the old default believed X-Forwarded-For first, so a client
// picked its key with its own copy (40 of 40 through). With -forwarded-header,
// only the named header counts.
func TestTrustedProxyHeaderIsTheOneNamed(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct{ flag, name, value string }{
				{"forwarded", "Forwarded", "for=198.51.100.7"},
				{"x-real-ip", "X-Real-IP", "198.51.100.7"},
			} {
				srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "10", "-period", "1m",
					"-trusted-proxies", "127.0.0.1/32", "-forwarded-header", tc.flag)
				proxy := client(t, "127.0.0.1")
				got := admittedOf(t, 40, func(i int) response {
					return do(t, proxy, http.MethodGet, srv.url+"/api/resource", nil,
						tc.name, tc.value,
						"X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i),
						map[string]string{"Forwarded": "X-Real-IP", "X-Real-IP": "Forwarded"}[tc.name], fmt.Sprintf("for=192.0.2.%d", i))
				})
				t.Logf("-forwarded-header %s: %d of 40 through", tc.flag, got)
				if got != 10 {
					t.Fatalf("-forwarded-header %s: %d of 40 through with rotating other headers, want 10", tc.flag, got)
				}
			}
		})
	}
}

// TestStalledBodiesAreCutOff: the server used to set only ReadHeaderTimeout, so
// connections that sent part of a /login body stayed open indefinitely. With the
// read timeout, each is closed within seconds.
func TestStalledBodiesAreCutOff(t *testing.T) {
	const conns = 20
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			cfg, err := parseFlags([]string{"-router", router, "-read-timeout", "1s"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			a, err := newApp(cfg, discardLogger(), hooks{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewUnstartedServer(a.handler)
			srv.Config = newHTTPServer(cfg, a.handler, discardLogger())
			srv.Start()
			t.Cleanup(func() { srv.Close(); _ = a.Close() })

			var wg sync.WaitGroup
			closed := make(chan bool, conns)
			for range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					closed <- stallBody(t, srv.Listener.Addr().String())
				}()
			}
			wg.Wait()
			close(closed)
			open := 0
			for ok := range closed {
				if !ok {
					open++
				}
			}
			if open > 0 {
				t.Fatalf("%d of %d connections with a stalled body were still open after 15 s (read timeout 1 s)", open, conns)
			}
		})
	}
}

// stallBody sends a /login request whose body stops short, then waits for the
// server to close the connection. It reports whether the server did within 15 s,
// far beyond the 1 s read timeout (the bound is generous: only an open connection
// fails).
func stallBody(t *testing.T, addr string) bool {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return true
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nusername=al")
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	reader := bufio.NewReader(conn)
	for {
		if _, err := reader.ReadByte(); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return false
			}
			return true // closed (possibly after an answer)
		}
	}
}

// TestRefusalFloodIsSummarised: the server logged every decision at INFO with the
// raw client address (3,000 refused requests, 3,000 lines). At info it now writes
// one summary per interval, with counts and no address, key or username.
func TestRefusalFloodIsSummarised(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, router, "-algorithm", "fixed_window", "-limit", "10", "-period", "1m")
			for i := range 3010 {
				peer := "192.0.2.77:1000"
				if r := serveLocal(srv.handler, http.MethodGet, "/api/resource", peer); i >= 10 && r.status != http.StatusTooManyRequests {
					t.Fatalf("request %d: %d, want 429", i, r.status)
				}
			}
			for i := range 30 {
				postLocal(srv.handler, "/login", "192.0.2.78:1000", loginForm("mallory", fmt.Sprint("guess", i)).Encode())
			}
			if n := strings.Count(srv.logs.String(), "\n"); n != 0 {
				t.Fatalf("3,040 requests wrote %d log lines before the summary:\n%.1000s", n, srv.logs.String())
			}
			srv.flushLogs()
			logs := srv.logs.String()
			t.Logf("after the flood: %d log line(s): %s", strings.Count(logs, "\n"), logs)
			if strings.Count(logs, "\n") != 1 || !strings.Contains(logs, "msg=\"rate limit summary\"") ||
				!strings.Contains(logs, "denied.api=3000") || !strings.Contains(logs, "denied.account=25") {
				t.Fatalf("want one summary line counting 3000 api and 25 account refusals:\n%s", logs)
			}
			for _, secret := range []string{"192.0.2.77", "192.0.2.78", "mallory", "ip:"} {
				if strings.Contains(logs, secret) {
					t.Fatalf("the info log names %q:\n%s", secret, logs)
				}
			}
		})
	}
}

// postLocal runs one form POST through the handler in process, from remoteAddr.
func postLocal(h http.Handler, target, remoteAddr, body string) response {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = remoteAddr
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return response{status: w.Code, header: w.Header(), body: w.Body.String()}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
