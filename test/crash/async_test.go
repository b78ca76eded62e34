package crash

import (
	"context"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/repl"
)

// TestAsyncCrashPrefix is the power-loss test of durability=async: commits are acknowledged before
// the log's fsync, so a crash may lose the last ones, but the state after recovery must be a prefix
// of the commit history, never a mix. Every transaction increments one counter row and inserts a
// history row numbered by the counter (the counter's row lock orders them, so log order = counter
// order): after recovery the history must be exactly 1..counter. One session stays sync: each of its
// acknowledged commits, and with it everything before it, must survive. Engine flushes during the load
// check that the engine never persists entries the log has not fsynced (recovery would refuse).
//
// KILN_ASYNC_CRASH_CYCLES sets the number of crashes (default 500); KILN_CRASH_SEED the seed.
func TestAsyncCrashPrefix(t *testing.T) {
	seed := int64(envInt("KILN_CRASH_SEED", int(time.Now().UnixNano()%1e9)))
	cycles := envInt("KILN_ASYNC_CRASH_CYCLES", 500)
	if testing.Short() {
		cycles = 50
	}
	t.Logf("seed %d, %d crashes (rerun with KILN_CRASH_SEED=%d)", seed, cycles, seed)
	rng := rand.New(rand.NewSource(seed))
	interval := func() time.Duration { return time.Duration(1+rng.Intn(8)) * time.Millisecond }
	fs := vfs.NewCrashableMem()
	st := openWith(t, fs, func(c *repl.Config) { c.SyncInterval = interval() })
	setup := st.db.NewSession(1, "root", "localhost", "")
	for _, q := range []string{"CREATE DATABASE c",
		"CREATE TABLE c.seq (id INT PRIMARY KEY, n BIGINT NOT NULL)",
		"CREATE TABLE c.hist (n BIGINT PRIMARY KEY, w INT NOT NULL, pad VARCHAR(40), KEY kw (w))",
		"INSERT INTO c.seq VALUES (1, 0)"} {
		if _, err := query(setup, q); err != nil {
			t.Fatal(err)
		}
	}
	setup.Close()
	var (
		mu         sync.Mutex
		syncAcked  int64 // highest counter value a sync commit was acknowledged with
		asyncAcked int64 // highest counter value acknowledged at all
		lostAcked  int64 // acknowledged async commits lost by crashes (allowed)
		total      int64
	)
	defer func() { t.Logf("%d commits survived, %d acknowledged async commits lost to crashes", total, lostAcked) }()
	for cycle := 0; cycle < cycles; cycle++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		const workers = 4
		for w := 0; w < workers; w++ {
			wg.Add(1)
			wseed := rng.Int63()
			go func(w int) {
				defer wg.Done()
				r := rand.New(rand.NewSource(wseed))
				s := st.db.NewSession(uint32(10+w), "root", "localhost", "c")
				defer s.Close()
				isSync := w == 0
				if !isSync {
					if _, err := query(s, "SET SESSION kiln_durability = 'async'"); err != nil {
						t.Error(err)
						return
					}
				}
				for ctx.Err() == nil {
					var n int64
					err := func() error {
						if _, err := query(s, "BEGIN"); err != nil {
							return err
						}
						if _, err := query(s, "UPDATE seq SET n = n + 1 WHERE id = 1"); err != nil {
							return err
						}
						rows, err := query(s, "SELECT n FROM seq WHERE id = 1")
						if err != nil {
							return err
						}
						n = rows[0][0].I
						if _, err := query(s, fmt.Sprintf("INSERT INTO hist VALUES (%d, %d, '%s')", n, w, fmt.Sprint(r.Int63()))); err != nil {
							return err
						}
						_, err = query(s, "COMMIT")
						return err
					}()
					if err != nil {
						return // the crash stopped the node
					}
					mu.Lock()
					if isSync {
						syncAcked = max(syncAcked, n)
					}
					asyncAcked = max(asyncAcked, n)
					mu.Unlock()
				}
			}(w)
		}
		if rng.Intn(3) == 0 {
			wg.Add(1)
			delay := time.Duration(rng.Intn(2000)) * time.Microsecond
			go func() {
				defer wg.Done()
				time.Sleep(delay)
				_ = st.eng.Flush()
			}()
		}
		time.Sleep(time.Duration(rng.Intn(4000)) * time.Microsecond)
		// The ledger is read under its lock with the clone: what was acknowledged before is covered.
		mu.Lock()
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.Intn(101), RNG: randv2.New(randv2.NewPCG(uint64(rng.Int63()), 3))})
		mustHave := syncAcked
		mu.Unlock()
		cancel()
		wg.Wait()
		st.abandon()
		fs = crashed
		st = openWith(t, fs, func(c *repl.Config) { c.SyncInterval = interval() })
		n := checkPrefix(t, cycle, seed, st)
		if n < mustHave {
			t.Fatalf("cycle %d (seed %d): counter %d after recovery, but a sync commit was acknowledged at %d", cycle, seed, n, mustHave)
		}
		mu.Lock()
		if asyncAcked > n {
			lostAcked += asyncAcked - n
		}
		total = n
		syncAcked, asyncAcked = n, n
		mu.Unlock()
		if cycle%25 == 0 {
			compareWithReplay(t, cycle, seed, st)
		}
	}
}

// checkPrefix asserts that the history is exactly 1..counter, through the primary key and the
// secondary index, and returns the counter.
func checkPrefix(t *testing.T, cycle int, seed int64, st *stack) int64 {
	t.Helper()
	s := st.db.NewSession(2, "root", "localhost", "c")
	defer s.Close()
	seq, err := query(s, "SELECT n FROM seq WHERE id = 1")
	if err != nil || len(seq) != 1 {
		t.Fatalf("cycle %d (seed %d): counter row: %v %v", cycle, seed, seq, err)
	}
	n := seq[0][0].I
	agg, err := query(s, "SELECT COUNT(*), COALESCE(MIN(n), 0), COALESCE(MAX(n), 0) FROM hist")
	if err != nil {
		t.Fatal(err)
	}
	cnt, lo, hi := agg[0][0].I, agg[0][1].I, agg[0][2].I
	if cnt != n || (n > 0 && (lo != 1 || hi != n)) {
		t.Fatalf("cycle %d (seed %d): not a prefix: counter %d, history has %d rows %d..%d", cycle, seed, n, cnt, lo, hi)
	}
	ix, err := query(s, "SELECT COUNT(*) FROM hist FORCE INDEX (kw) WHERE w >= 0")
	if err != nil || ix[0][0].I != n {
		t.Fatalf("cycle %d (seed %d): index kw has %v rows (%v), history %d", cycle, seed, ix, err, n)
	}
	return n
}
