package redisstore

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"
)

// floordivScript applies common.lua's floordiv to each pair of its arguments.
const floordivScript = `
local out = {}
for i = 1, #ARGV, 2 do
  out[#out + 1] = floordiv(tonumber(ARGV[i]), tonumber(ARGV[i + 1]))
end
return out
`

// TestFloordiv: the scripts' floordiv is ⌊a/b⌋, Go's a / b for a >= 0, for |a| < 2^53
// and 1 <= b < 2^53, at the edges where a double division rounds across an integer,
// for negative dividends (wait_until's), and at random; on miniredis and on a real
// redis-server.
func TestFloordiv(t *testing.T) { onBothServers(t, testFloordiv) }

func testFloordiv(t *testing.T, client *redis.Client) {
	const limit = int64(1) << 53
	var pairs [][2]int64
	add := func(a, b int64) {
		if a > -limit && a < limit && b >= 1 && b < limit {
			pairs = append(pairs, [2]int64{a, b}, [2]int64{-a, b})
		}
	}
	for _, b := range []int64{1, 2, 3, 7, 10, 1000, 999_999_937, 1<<26 + 1, 1<<40 - 3, 1<<52 - 1, limit - 1} {
		for _, k := range []int64{0, 1, 2, 3, limit/b - 1, limit / b, limit/b/2 + 1} {
			for _, d := range []int64{-1, 0, 1} {
				add(k*b+d, b)
			}
		}
		add(limit-1, b)
		add(limit-b, b)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		add(rng.Int64N(limit), 1+rng.Int64N(1<<uint(1+rng.IntN(52))))
	}
	args := make([]any, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	got, err := redis.NewScript(mustRead("common.lua")+floordivScript).Run(context.Background(), client, nil, args...).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(pairs) {
		t.Fatalf("%d quotients for %d pairs", len(got), len(pairs))
	}
	for i, p := range pairs {
		want := p[0] / p[1]
		if p[0]%p[1] != 0 && p[0] < 0 {
			want-- // Go truncates towards zero; floordiv floors
		}
		if got[i] != want {
			t.Errorf("floordiv(%d, %d) = %d, want %d", p[0], p[1], got[i], want)
		}
	}
}
