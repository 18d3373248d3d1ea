package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartClusterWithReplicas starts a Cluster of masters for tb, each with one replica
// that takes its slots over when it fails, and stops it when tb ends. A node that has
// not answered for nodeTimeout (cluster-node-timeout) is failed: the whole Cluster
// refuses commands (CLUSTERDOWN, with the default cluster-require-full-coverage)
// until that master's replica is promoted, a second or two later. It skips tb when
// redis-server is missing (see Require).
func StartClusterWithReplicas(tb testing.TB, masters int, nodeTimeout time.Duration) *Cluster {
	tb.Helper()
	path := Require(tb)
	c, err := newCluster(path, tb.TempDir(), masters, nodeTimeout)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Stop() })
	for i := range c.Servers {
		if err := c.addReplica(i); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// addReplica starts a node, joins it to c as the replica of master i, and returns
// once it has synchronised with that master and every node knows it.
func (c *Cluster) addReplica(i int) error {
	replica, err := c.startNode("replica" + strconv.Itoa(i))
	if err != nil {
		return err
	}
	c.Replicas = append(c.Replicas, replica)
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	masterClient := redis.NewClient(&redis.Options{Addr: c.Servers[i].Addr})
	defer masterClient.Close()
	client := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer client.Close()
	masterID, err := masterClient.Do(ctx, "cluster", "myid").Text()
	if err != nil {
		return fmt.Errorf("redistest: cluster myid: %w", err)
	}
	host, port, _ := strings.Cut(c.Servers[i].Addr, ":")
	if err := client.ClusterMeet(ctx, host, port).Err(); err != nil {
		return fmt.Errorf("redistest: cluster meet %s: %w", c.Servers[i].Addr, err)
	}
	// CLUSTER REPLICATE needs the replica to know the master, which the meeting's
	// handshake takes a moment to establish.
	var replicateErr error
	if !poll(ctx, func(ctx context.Context) bool {
		replicateErr = client.Do(ctx, "cluster", "replicate", masterID).Err()
		return replicateErr == nil
	}) {
		return fmt.Errorf("redistest: cluster replicate %s on %s: %w", masterID, replica.Addr, replicateErr)
	}
	if err := replica.waitSynced(); err != nil {
		return err
	}
	nodes := strconv.Itoa(len(c.Servers) + len(c.Replicas))
	for _, s := range append(c.Servers, c.Replicas...) {
		if err := waitInfo(ctx, s, "cluster_known_nodes:"+nodes+"\r"); err != nil {
			return err
		}
	}
	return nil
}

// waitInfo waits, until ctx ends, for the CLUSTER INFO of s to hold want.
func waitInfo(ctx context.Context, s *Server, want string) error {
	client := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer client.Close()
	var info string
	var err error
	if poll(ctx, func(ctx context.Context) bool {
		info, err = client.ClusterInfo(ctx).Result()
		return err == nil && strings.Contains(info, want)
	}) {
		return nil
	}
	return fmt.Errorf("redistest: %s: CLUSTER INFO never held %q: %s %v", s.Addr, strings.TrimSpace(want), info, err)
}

// WaitPromoted waits, for up to 30 s, until replica i reports itself a master and
// the Cluster's state, as it sees it, is ok again.
func (c *Cluster) WaitPromoted(i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: c.Replicas[i].Addr})
	defer client.Close()
	var err error
	if !poll(ctx, func(ctx context.Context) bool {
		var role string
		role, err = client.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(role, "role:master")
	}) {
		return fmt.Errorf("redistest: replica %s was not promoted: %v", c.Replicas[i].Addr, err)
	}
	return waitInfo(ctx, c.Replicas[i], "cluster_state:ok")
}
