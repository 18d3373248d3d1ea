package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterTimeout bounds how long a new Cluster may take to agree on its slots.
const clusterTimeout = 30 * time.Second

// slots is the number of Redis Cluster hash slots.
const slots = 16384

// Cluster is a Redis Cluster of masters, each a Server, and optionally one replica
// per master.
type Cluster struct {
	// Servers are the masters; master i serves an equal i-th share of the slots.
	Servers []*Server
	// Replicas, when the Cluster has them, are the masters' replicas: Replicas[i]
	// replicates Servers[i], and takes its slots over when it fails.
	Replicas []*Server

	path        string
	dir         string
	nodeTimeout time.Duration
}

// StartCluster starts a Cluster of masters for tb, with data under tb.TempDir(), and
// stops it when tb ends. It skips tb when redis-server is missing (see Require).
func StartCluster(tb testing.TB, masters int) *Cluster {
	tb.Helper()
	path := Require(tb)
	c, err := NewCluster(path, tb.TempDir(), masters)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Stop() })
	return c
}

// NewCluster starts masters redis-server processes in cluster mode under dir, gives
// each an equal share of the slots, joins them, and returns when every node reports
// cluster_state:ok and knows every slot's owner. The caller must Stop it.
func NewCluster(path, dir string, masters int) (*Cluster, error) {
	return newCluster(path, dir, masters, 5*time.Second)
}

// newCluster is NewCluster with the nodes' cluster-node-timeout.
func newCluster(path, dir string, masters int, nodeTimeout time.Duration) (*Cluster, error) {
	if masters < 1 {
		return nil, fmt.Errorf("redistest: a cluster needs a master, got %d", masters)
	}
	c := &Cluster{path: path, dir: dir, nodeTimeout: nodeTimeout}
	for i := 0; i < masters; i++ {
		s, err := c.startNode("node" + strconv.Itoa(i))
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	if err := c.join(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// startNode starts a cluster-enabled redis-server with its data in dir/name.
func (c *Cluster) startNode(name string) (*Server, error) {
	nodeDir := filepath.Join(c.dir, name)
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	return Start(c.path, nodeDir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(c.nodeTimeout.Milliseconds(), 10), "--cluster-require-full-coverage", "yes",
		"--repl-diskless-sync-delay", "0") // a replica syncs at once, not 5s later
}

func (c *Cluster) join() error {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	clients := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		clients[i] = redis.NewClient(&redis.Options{Addr: s.Addr})
		defer clients[i].Close()
	}
	for i, client := range clients {
		first, last := i*slots/len(clients), (i+1)*slots/len(clients)-1
		if err := client.Do(ctx, "cluster", "set-config-epoch", i+1).Err(); err != nil {
			return fmt.Errorf("redistest: cluster set-config-epoch: %w", err)
		}
		if err := client.ClusterAddSlotsRange(ctx, first, last).Err(); err != nil {
			return fmt.Errorf("redistest: cluster addslotsrange %d-%d: %w", first, last, err)
		}
	}
	for _, s := range c.Servers[1:] {
		host, port, _ := strings.Cut(s.Addr, ":")
		p, _ := strconv.Atoi(port)
		if err := clients[0].ClusterMeet(ctx, host, strconv.Itoa(p)).Err(); err != nil {
			return fmt.Errorf("redistest: cluster meet %s: %w", s.Addr, err)
		}
	}
	for {
		ready, why := c.converged(ctx, clients)
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: cluster did not converge within %v: %s", clusterTimeout, why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// converged reports whether every node is ok and sees every master's slots.
func (c *Cluster) converged(ctx context.Context, clients []*redis.Client) (bool, string) {
	for i, client := range clients {
		info, err := client.ClusterInfo(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(clients))+"\r") {
			return false, fmt.Sprintf("node %d: %s", i, strings.ReplaceAll(info, "\r\n", " "))
		}
		shards, err := client.ClusterShards(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		if len(shards) != len(clients) {
			return false, fmt.Sprintf("node %d sees %d shards", i, len(shards))
		}
		for _, shard := range shards {
			if len(shard.Slots) == 0 {
				return false, fmt.Sprintf("node %d sees a shard without slots", i)
			}
		}
	}
	return true, ""
}

// Addrs are the masters' addresses, the seeds of a cluster client.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		addrs[i] = s.Addr
	}
	return addrs
}

// NewClient returns a cluster client that honours ctx deadlines. The caller closes it.
func (c *Cluster) NewClient() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true})
}

// Stop stops every node.
func (c *Cluster) Stop() error {
	var errs []error
	for _, s := range append(c.Servers, c.Replicas...) {
		errs = append(errs, s.Stop())
	}
	return errors.Join(errs...)
}

// MasterOf is the index in Servers of the master that serves slot, as c was
// started: master i serves the i-th equal share of the slots.
func (c *Cluster) MasterOf(slot int) int {
	n := len(c.Servers)
	for i := range n - 1 {
		if slot < (i+1)*slots/n {
			return i
		}
	}
	return n - 1
}

// KeyOn is the first of prefix0, prefix1, … whose Redis key, as name makes it, lives
// on master (which serves the master-th equal share of the slots, as c was started).
func (c *Cluster) KeyOn(master int, prefix string, name func(key string) string) (string, error) {
	client := c.Servers[0].NewClient()
	defer client.Close()
	for i := 0; i < 10_000; i++ {
		key := prefix + strconv.Itoa(i)
		slot, err := client.ClusterKeySlot(context.Background(), name(key)).Result()
		if err != nil {
			return "", fmt.Errorf("redistest: CLUSTER KEYSLOT: %w", err)
		}
		if c.MasterOf(int(slot)) == master {
			return key, nil
		}
	}
	return "", fmt.Errorf("redistest: no key %s… on master %d", prefix, master)
}
