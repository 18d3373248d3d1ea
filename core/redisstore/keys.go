package redisstore

import (
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
)

// HashTagFunc chooses the Redis Cluster hash tag of a policy's state for a key. Keys
// with equal tags live in one slot, so a stack whose keys share a tag is decided in
// one script call, all-or-nothing, even on a Cluster. Returning "" keeps the default
// tag, which places every (policy, key) in its own slot. Braces and '%' in a tag are
// percent-encoded, like those of a key, so no tag can end early. The function must be
// deterministic.
type HashTagFunc func(policy, key string) string

// TagByKey is a HashTagFunc that places every policy's state for one key in one slot:
// use it for stacks whose policies share their key (per-second and per-day limits of
// one tenant).
func TagByKey(_, key string) string { return key }

// TagPolicies returns a HashTagFunc that places the state of the named policies in the
// slot of tag, whatever the key, so that a stack of them (login: account, IP, subnet)
// is one script call on a Cluster. All of their keys then live on one node.
func TagPolicies(tag string, policies ...string) HashTagFunc {
	names := append([]string(nil), policies...)
	return func(policy, _ string) string {
		for _, name := range names {
			if name == policy {
				return tag
			}
		}
		return ""
	}
}

// stateKey is the Redis key of policy p's state for key: by default
//
//	<prefix>{<policy ID>:<key>}          rl:{api#tb.10.1000.20:user-42}
//
// and with a hash tag from a HashTagFunc
//
//	<prefix>{<tag>}<policy ID>:<key>     rl:{login}login-ip#tb.20.60000.20:203.0.113.9
//
// The key and the tag are user input (a username, a tenant): their '{', '}' and '%'
// are percent-encoded (%7B, %7D, %25), so no input can end the hash tag early and
// move its state into another (policy, key)'s slot. The policy ID holds the name and
// parameters, so a changed policy never reads another's state. Both layouts are
// injective: a policy name holds no '#' or braces, an ID's parameters no ':', the
// prefix no braces, and the encoding is reversible.
func (s *Store) stateKey(p *core.Policy, key string) string {
	if s.hashTag != nil {
		if tag := s.hashTag(p.Name(), key); tag != "" {
			return s.prefix + "{" + escapeHashTag(tag) + "}" + p.ID() + ":" + escapeHashTag(key)
		}
	}
	return s.prefix + "{" + p.ID() + ":" + escapeHashTag(key) + "}"
}

// escapeHashTag percent-encodes '{', '}' and '%' in s, so that s can sit inside a
// Redis Cluster hash tag without ending it or opening another. Other bytes, and s
// without any of the three, are returned unchanged, without allocating.
func escapeHashTag(s string) string {
	if !strings.ContainsAny(s, "{}%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '{':
			b.WriteString("%7B")
		case '}':
			b.WriteString("%7D")
		case '%':
			b.WriteString("%25")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hashTagOf is the part of a Redis key that Redis Cluster hashes: the text between the
// first '{' and the first '}' after it, when not empty; else the whole key.
func hashTagOf(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			return key[open+1 : open+1+end]
		}
	}
	return key
}

// slotOf is the Redis Cluster slot of key: CRC16-CCITT (XMODEM) of its hash tag, mod 16384.
func slotOf(key string) int {
	crc := uint16(0)
	for _, b := range []byte(hashTagOf(key)) {
		crc ^= uint16(b) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}
