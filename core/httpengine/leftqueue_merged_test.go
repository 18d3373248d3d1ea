package httpengine_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// As TestRequestThatLeftTheQueueIsAnErrorNotAnAdmission, with the app-wide Limiter
// on the same store: the queue's Limiter merges its decision, and the app-wide
// Limiter's observer hears the error too. It heard nothing before: the request
// vanished from the app-wide metrics.
func TestRequestThatLeftAMergedQueueIsHeardByEveryObserver(t *testing.T) {
	store, _ := newStore(t)
	queue := core.MustPolicy("queue", core.LeakyBucket, core.Every(time.Hour), core.WithBurst(1))
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	appSeen, queueSeen := &recorder{}, &recorder{}
	app := httpengine.Must(store, httpengine.Limit(api, headerKey), httpengine.WithObserver(appSeen))
	l := httpengine.Must(store, httpengine.Limit(queue, headerKey), httpengine.WithObserver(queueSeen))
	through := func(r *http.Request, next http.HandlerFunc) {
		serve(app, r, func(_ http.ResponseWriter, r *http.Request) { serve(l, r, next) })
	}
	through(request("192.0.2.1:1", "X-Key", "a"), ok)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	through(request("192.0.2.1:1", "X-Key", "a").WithContext(ctx), ok)
	appSeen.mu.Lock()
	defer appSeen.mu.Unlock()
	if got := fmt.Sprint(appSeen.verdicts); len(appSeen.verdicts)+len(appSeen.errs) < 2 {
		t.Errorf("the app-wide observer saw %s and errors %v: the request that left the queue is missing", got, appSeen.errs)
	}
}
