package cluster

import (
	"context"
	"math/rand"
	"testing"
	"time"
)

// TestLinearizableReads: with kiln_read_concern = linearizable, a read on any follower right after
// a commit on the leader returns that commit (no GTID passed around: the follower gets a
// quorum-confirmed read index from the leader and applies up to it first), KILN_LINEARIZABLE_ITERATIONS
// times (default 300). A plain (local) read just before counts how often the follower was behind.
func TestLinearizableReads(t *testing.T) {
	iters := envInt(t, "KILN_LINEARIZABLE_ITERATIONS", 300)
	rng := rand.New(rand.NewSource(seed(t)))
	c := newCluster(t, 3)
	c.mustExec("CREATE DATABASE lin")
	c.mustExec("CREATE TABLE lin.t (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	c.mustExec("INSERT INTO lin.t VALUES (1, 0)")
	leader, err := c.waitConverged(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type reader struct {
		n      *node
		plain  func() int64
		linear func() int64
	}
	var readers []reader
	for _, n := range c.nodes {
		if n == leader {
			continue
		}
		conn, err := n.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET SESSION kiln_read_concern = 'linearizable'"); err != nil {
			t.Fatal(err)
		}
		n := n
		readers = append(readers, reader{n: n,
			plain: func() int64 {
				var v int64
				if err := n.db.QueryRowContext(ctx, "SELECT v FROM lin.t WHERE id = 1").Scan(&v); err != nil {
					t.Fatalf("plain read on %v: %v", n, err)
				}
				return v
			},
			linear: func() int64 {
				var v int64
				if err := conn.QueryRowContext(ctx, "SELECT v FROM lin.t WHERE id = 1").Scan(&v); err != nil {
					t.Fatalf("linearizable read on %v: %v", n, err)
				}
				return v
			}})
	}
	behind := 0
	for i := 1; i <= iters; i++ {
		if _, err := leader.db.ExecContext(ctx, "UPDATE lin.t SET v = ? WHERE id = 1", i); err != nil {
			t.Fatalf("iteration %d: commit on the leader: %v", i, err)
		}
		r := readers[rng.Intn(len(readers))]
		if r.plain() < int64(i) {
			behind++
		}
		if got := r.linear(); got != int64(i) {
			t.Fatalf("iteration %d: linearizable read on %v returned %d, want %d (committed before the read)", i, r.n, got, i)
		}
	}
	t.Logf("%d iterations; a plain read on the follower was behind %d times", iters, behind)
}
