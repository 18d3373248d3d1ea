// Package embedded runs the Redis store on an in-process Redis (miniredis): the same
// Lua scripts as on a real server, with no server to install. It is for tests, demos
// and trying the Redis path; state lives only as long as the store. The server
// listens on a loopback port and requires a random password only the store knows,
// so no other local process can read or change the limits.
//
// It is a package of its own so that programs which use a real Redis do not link
// miniredis and its Lua interpreter: only a program that imports this package does.
//
//	store, err := embedded.New()
//	if err != nil {
//		return err
//	}
//	defer store.Close() // stops the server too
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"})
//
// miniredis, made for tests, does not count TTLs down by itself, so the store does,
// once a second, by the real time that passed, as Redis does: memory stays bounded
// by the keys in use. A countdown in steps of a second takes a whole second off a
// key written just before it, so every TTL holds a second more than on Redis
// (redisstore.WithExpiryStep), and a countdown never takes off more than a second at
// once (a stalled process keeps its keys longer): no key expires before its state
// has recovered. NewOnClock decides at a clock of the caller's and counts the TTLs
// down on it instead, for replays on a virtual clock.
package embedded
