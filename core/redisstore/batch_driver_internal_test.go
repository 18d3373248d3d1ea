package redisstore

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// driverPrologue counts its runs, then ends early on some arguments: with an error
// reply ("bad"), by raising ("raise"), or through a command that raises WRONGTYPE
// ("call").
const driverPrologue = `redis.call('INCR', 'prologue-runs')
local tag = ARGV[1]
if tag == 'bad' then
  return redis.error_reply('RATELIMIT bad arguments')
elseif tag == 'raise' then
  error('raised in the prologue')
elseif tag == 'call' then
  redis.call('INCR', 'a-hash')
end
`

// driverBody answers with its second argument and how often its key was charged.
const driverBody = `return {tonumber(ARGV[2]), redis.call('INCR', KEYS[1])}`

// TestBatchDriverPrologue: decisions that share their arguments run the prologue
// once, each runs the body with its own key, and a prologue that ends early fails
// exactly the decisions of its arguments, while the others are decided; arguments of
// another shape fail the whole call before anything runs. It runs on
// miniredis and on a real redis-server.
func TestBatchDriverPrologue(t *testing.T) { onBothServers(t, testBatchDriverPrologue) }

func testBatchDriverPrologue(t *testing.T, client *redis.Client) {
	ctx := context.Background()
	if err := client.HSet(ctx, "a-hash", "field", "value").Err(); err != nil {
		t.Fatal(err)
	}
	s := newBatchScript(newLeanScript(driverPrologue, driverBody, "", false))
	keys := []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7"}
	argv := []any{
		2, 2, 0, "x", "7", // k1, k2
		2, 2, 0, "bad", "0", // k3, k4
		1, 2, 0, "raise", "0", // k5
		1, 2, 0, "call", "0", // k6
		1, 2, 2, "x", "redis", // k7: the instant of the server
	}
	before, err := client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	reply, err := s.Run(ctx, client, keys, argv...).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	after, err := client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := splitBatchReply(reply, len(keys))
	if err != nil {
		t.Fatal(err)
	}
	if runs, err := client.Get(ctx, "prologue-runs").Int(); err != nil || runs != 5 {
		t.Errorf("the prologue ran %d times (%v), want 5: once per distinct arguments", runs, err)
	}
	for i, want := range [][]int64{{7, 1}, {7, 1}} {
		if got := entries[i].ints; entries[i].err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: %v %v, want %v", keys[i], got, entries[i].err, want)
		}
	}
	for i, want := range map[int]string{2: "RATELIMIT bad arguments", 3: "RATELIMIT bad arguments", 4: "raised in the prologue", 5: "WRONGTYPE"} {
		if entries[i].err == nil || !strings.Contains(entries[i].err.Error(), want) {
			t.Errorf("%s: %v %v, want an error with %q", keys[i], entries[i].ints, entries[i].err, want)
		}
		if n, err := client.Exists(ctx, keys[i]).Result(); err != nil || n != 0 {
			t.Errorf("%s: written after its prologue failed", keys[i])
		}
	}
	got := entries[6].ints
	if entries[6].err != nil || len(got) != 2 || got[0] < before.UnixMilli() || got[0] > after.UnixMilli() || got[1] != 1 {
		t.Errorf("k7: %v %v, want the server's instant within [%d, %d] and 1", got, entries[6].err, before.UnixMilli(), after.UnixMilli())
	}
	for _, bad := range [][]any{
		{1, 2, 0, "x", "7", 5, 2, 0, "x", "7"}, // a run of more decisions than keys remain
		{1, 2, 0, "x", "7", 1, 2, 0, "x"},      // a run cut short
		{1, 2, 0, "x", "7", 1, 2, 0, "x", "7", "extra"},
		{1, 2, 3, "x", "7", 1, 2, 0, "x", "7"}, // an instant beyond the arguments
		{1.5, 2, 0, "x", "7", 1, 2, 0, "x", "7"},
	} {
		err := s.Run(ctx, client, []string{"k8", "k9"}, bad...).Err()
		if err == nil || !strings.Contains(err.Error(), "RATELIMIT malformed batch arguments") {
			t.Errorf("%v: %v, want the batch refused", bad, err)
		}
	}
	if runs, _ := client.Get(ctx, "prologue-runs").Int(); runs != 5 {
		t.Errorf("malformed batches ran the prologue: %d runs, want 5", runs)
	}
	if n, _ := client.Exists(ctx, "k8", "k9").Result(); n != 0 {
		t.Errorf("a malformed batch wrote %d keys", n)
	}
}
