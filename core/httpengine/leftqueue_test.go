package httpengine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// A request that leaves the leaky-bucket queue before its slot is given back its
// charge and never reaches its handler: its observers hear an error (the request
// ended), not a decision that "allowed" (admitted and charged) it. An app-wide
// Limiter on another store, given back too, reports the request uncharged.
func TestRequestThatLeftTheQueueIsAnErrorNotAnAdmission(t *testing.T) {
	store, _ := newStore(t)
	other, _ := newStore(t)
	appSeen, queueSeen, ran := leaveQueue(t, other, store)
	if ran {
		t.Fatal("the handler ran for a request that left the queue")
	}
	appSeen.mu.Lock()
	queueSeen.mu.Lock()
	defer appSeen.mu.Unlock()
	defer queueSeen.mu.Unlock()
	if got := fmt.Sprint(queueSeen.verdicts); got != "[[allowed]]" || len(queueSeen.errs) != 1 || !errors.Is(queueSeen.errs[0], context.DeadlineExceeded) {
		t.Errorf("the queue's observer saw %s and errors %v, want [[allowed]] (the head) and the deadline's error", got, queueSeen.errs)
	}
	if got := fmt.Sprint(appSeen.verdicts); got != "[[allowed] [uncharged]]" || len(appSeen.errs) != 0 {
		t.Errorf("the app-wide observer saw %s and errors %v, want [[allowed] [uncharged]] and none", got, appSeen.errs)
	}
}

// As TestRequestThatLeftTheQueueIsAnErrorNotAnAdmission, with the app-wide Limiter
// on the same store: the queue's Limiter merges its decision, and the app-wide
// Limiter's observer hears the error too. It heard nothing before: the request
// vanished from the app-wide metrics.
func TestRequestThatLeftAMergedQueueIsHeardByEveryObserver(t *testing.T) {
	store, _ := newStore(t)
	appSeen, _, _ := leaveQueue(t, store, store)
	appSeen.mu.Lock()
	defer appSeen.mu.Unlock()
	if got := fmt.Sprint(appSeen.verdicts); len(appSeen.verdicts)+len(appSeen.errs) < 2 {
		t.Errorf("the app-wide observer saw %s and errors %v: the request that left the queue is missing", got, appSeen.errs)
	}
}

// leaveQueue serves two requests of one client through an app-wide Limiter (api, on
// appStore) around a leaky-bucket queue's (on queueStore, a slot per hour): the
// first takes the head of the queue and is served; the second waits behind it until
// its deadline, 5 ms later, ends the wait. It returns what each Limiter's observer
// saw, and whether the second request's handler ran.
func leaveQueue(t *testing.T, appStore, queueStore core.Store) (appSeen, queueSeen *recorder, ran bool) {
	t.Helper()
	queue := core.MustPolicy("queue", core.LeakyBucket, core.Every(time.Hour), core.WithBurst(1))
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	appSeen, queueSeen = &recorder{}, &recorder{}
	app := httpengine.Must(appStore, httpengine.Limit(api, headerKey), httpengine.WithObserver(appSeen))
	l := httpengine.Must(queueStore, httpengine.Limit(queue, headerKey), httpengine.WithObserver(queueSeen))
	through := func(r *http.Request, next http.HandlerFunc) {
		serve(app, r, func(_ http.ResponseWriter, r *http.Request) { serve(l, r, next) })
	}
	through(request("192.0.2.1:1", "X-Key", "a"), ok) // the head of the queue, served
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	through(request("192.0.2.1:1", "X-Key", "a").WithContext(ctx), func(http.ResponseWriter, *http.Request) { ran = true })
	return appSeen, queueSeen, ran
}
