package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// A log keyed by API keys replayed on a real redis-server: Redis holds each key as
// its hash, never the raw secret (DESIGN's "never contain a raw API key"), and the
// decisions are those of the memory store, with the log's keys in decisions.csv.
func TestRedisHoldsNoRawAPIKey(t *testing.T) {
	srv := redistest.StartServer(t)
	const secret = "sk_live_SECRET123"
	var log strings.Builder
	for i := range 8 {
		key := secret
		if i%3 == 2 {
			key = "sk_live_OTHER456"
		}
		log.WriteString(`{"time":` + strconv.FormatInt(1_767_225_600_000+int64(i)*100, 10) + `,"headers":{"X-Api-Key":"` + key + `"}}` + "\n")
	}
	args := []string{"-format", "jsonl", "-key", "header:X-Api-Key", "-algorithm", "token_bucket", "-limit", "2", "-period", "1s"}
	replay := func(extra ...string) string {
		var out, errs bytes.Buffer
		if err := run(context.Background(), append(args, extra...), strings.NewReader(log.String()), &out, &errs); err != nil {
			t.Fatalf("%v: %v\n%s", extra, err, errs.String())
		}
		return out.String()
	}
	memory := replay()
	onRedis := replay("-store", "redis", "-redis-addrs", srv.Addr)
	if onRedis != memory {
		t.Fatalf("decisions on Redis differ from memory:\n%s\nwant\n%s", onRedis, memory)
	}
	if !strings.Contains(onRedis, secret) {
		t.Fatalf("decisions.csv does not show the log's key:\n%s", onRedis)
	}
	client := srv.NewClient()
	defer client.Close()
	keys, err := client.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("Redis holds %d keys, want one per API key (2): %q", len(keys), keys)
	}
	for _, k := range keys {
		if strings.Contains(k, "sk_live") {
			t.Errorf("Redis key %q holds a raw API key", k)
		}
	}
}
