// Package crash proves the commit path's durability claims with simulated power loss: the binlog and
// the engine share one pebble CrashableMem filesystem; concurrent clients commit random
// transactions through the SQL layer; at random moments (also exactly between a log fsync and the
// apply) the filesystem is cloned as a power loss would leave it (synced data kept, unsynced data kept
// or lost at random); the node restarts on the clone, and the test checks that every acknowledged
// commit is there, nothing beyond the history exists, and the engine equals a fresh replay of the log.
//
// Seeded and reproducible: KILN_CRASH_SEED fixes the seed, KILN_CRASH_CYCLES the number of crashes
// (CI runs the default; `make soak` runs as long as asked and prints the seed of any failure).
package crash

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/sql"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/txn"
)

// stack is one incarnation of a node on a filesystem.
type stack struct {
	lg   *klog.Log
	eng  *engine.Engine
	node *repl.Node
	txm  *txn.Manager
	db   *sql.DB
}

func open(t testing.TB, fs vfs.FS, afterSync func()) *stack {
	t.Helper()
	return openWith(t, fs, func(c *repl.Config) { c.AfterSync = afterSync })
}

// incarnations counts opened stacks: every other one runs the pipelined commit path
// (repl.Config.PipelineSync), so both commit paths are crashed and checked.
var incarnations atomic.Int64

func openWith(t testing.TB, fs vfs.FS, tweak func(*repl.Config), sqlTweaks ...func(*sql.Config)) *stack {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lg, err := klog.Open("/data/log", klog.Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	eng, err := engine.Open("/data/engine", engine.Options{FS: fs, DisableWAL: true, CacheBytes: 8 << 20})
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	cfg := repl.Config{Log: lg, Engine: eng, Applier: sql.NewApplier(), TickInterval: 10 * time.Millisecond, Logger: quiet, PurgeInterval: -1,
		PipelineSync: incarnations.Add(1)%2 == 0}
	tweak(&cfg)
	node, err := repl.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	txm := txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), node)
	sqlCfg := sql.Config{Version: "crash-test", LockWaitTimeout: 5 * time.Second}
	for _, f := range sqlTweaks {
		f(&sqlCfg)
	}
	db, err := sql.Open(context.Background(), txm, sqlCfg)
	if err != nil {
		t.Fatalf("open sql: %v", err)
	}
	return &stack{lg: lg, eng: eng, node: node, txm: txm, db: db}
}

// abandon stops the old incarnation; its filesystem is no longer used after the crash clone, and
// closing frees its memtables and caches.
func (s *stack) abandon() {
	s.node.Stop()
	_ = s.eng.Close()
	_ = s.lg.Close()
}

type rows struct {
	rows [][]types.Value
}

func (r *rows) Columns([]proto.Column) error { return nil }
func (r *rows) Row(v []types.Value) error {
	row := append([]types.Value(nil), v...)
	for i := range row {
		row[i].S = strings.Clone(row[i].S) // valid only during the call (proto.ResultWriter)
	}
	r.rows = append(r.rows, row)
	return nil
}
func (r *rows) EndRows(uint16, bool) error { return nil }
func (r *rows) OK(proto.OK, bool) error    { return nil }

func query(s *sql.Session, q string) ([][]types.Value, error) {
	r := &rows{}
	err := s.Query(context.Background(), q, r)
	return r.rows, err
}

// ledger is what clients were told: per row, the last acknowledged value and whether a later write
// was in flight when the crash hit (then either value may survive).
type ledger struct {
	mu       sync.Mutex
	acked    map[int64]int64 // id -> acknowledged v (-1: acknowledged delete)
	inflight map[int64]int64 // id -> value being written when the crash came
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestCrashRecovery(t *testing.T) {
	seed := int64(envInt("KILN_CRASH_SEED", int(time.Now().UnixNano()%1e9)))
	cycles := envInt("KILN_CRASH_CYCLES", 2000)
	if testing.Short() {
		cycles = 200
	}
	t.Logf("seed %d, %d crashes (rerun with KILN_CRASH_SEED=%d)", seed, cycles, seed)
	rng := rand.New(rand.NewSource(seed))
	fs := vfs.NewCrashableMem()
	led := &ledger{acked: map[int64]int64{}, inflight: map[int64]int64{}}
	var crashPct int
	var crashSeed int64
	var crashed *vfs.MemFS
	var crashMu sync.Mutex
	var armed atomic.Int32 // >0: crash inside the next AfterSync hook
	var ackedAtCrash, inflightAtCrash map[int64]int64
	crashNow := func() {
		crashMu.Lock()
		defer crashMu.Unlock()
		if crashed != nil {
			return
		}
		// The clone and the ledger snapshot are taken under the ledger lock: an acknowledgement
		// recorded before it was durable before the clone; one recorded after is still "in flight".
		led.mu.Lock()
		defer led.mu.Unlock()
		crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: crashPct, RNG: randv2.New(randv2.NewPCG(uint64(crashSeed), 1))})
		ackedAtCrash = make(map[int64]int64, len(led.acked))
		for k, v := range led.acked {
			ackedAtCrash[k] = v
		}
		inflightAtCrash = make(map[int64]int64, len(led.inflight))
		for k, v := range led.inflight {
			inflightAtCrash[k] = v
		}
	}
	afterSync := func() {
		if armed.Load() > 0 && armed.Add(-1) == 0 {
			crashNow()
		}
	}
	st := open(t, fs, afterSync)
	setup := st.db.NewSession(1, "root", "localhost", "")
	for _, q := range []string{"CREATE DATABASE c", "CREATE TABLE c.t (id BIGINT PRIMARY KEY, v BIGINT NOT NULL, w VARCHAR(20), KEY kv (v))"} {
		if _, err := query(setup, q); err != nil {
			t.Fatal(err)
		}
	}
	nextID := int64(1)
	for cycle := 0; cycle < cycles; cycle++ {
		crashed = nil
		crashPct, crashSeed = rng.Intn(101), rng.Int63()
		// Half the cycles release row locks early (kiln_early_lock_release): the same promises hold.
		st.txm.SetEarlyRelease(rng.Intn(2) == 0)
		// Workers commit small random transactions on disjoint id ranges.
		const workers = 4
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		mode := rng.Intn(3) // 0: crash after a random delay, 1: between fsync and apply, 2: mid-DDL
		if mode == 1 {
			armed.Store(int32(1 + rng.Intn(4)))
		}
		for w := 0; w < workers; w++ {
			wg.Add(1)
			base := nextID + int64(w)*1000
			wseed := rng.Int63()
			go func(w int) {
				defer wg.Done()
				r := rand.New(rand.NewSource(wseed))
				s := st.db.NewSession(uint32(10+w), "root", "localhost", "c")
				defer s.Close()
				for i := 0; ctx.Err() == nil && i < 8; i++ {
					id := base + int64(r.Intn(20))
					v := int64(r.Intn(1_000_000))
					var stmts []string
					var writes = map[int64]int64{}
					switch r.Intn(4) {
					case 0:
						stmts = []string{fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'x') ON DUPLICATE KEY UPDATE v = %d", id, v, v)}
						writes[id] = v
					case 1:
						stmts = []string{fmt.Sprintf("DELETE FROM t WHERE id = %d", id)}
						writes[id] = -1
					case 2:
						id2 := base + 20 + int64(r.Intn(20))
						stmts = []string{"BEGIN",
							fmt.Sprintf("REPLACE INTO t VALUES (%d, %d, 'a')", id, v),
							fmt.Sprintf("REPLACE INTO t VALUES (%d, %d, 'b')", id2, v+1),
							"COMMIT"}
						writes[id], writes[id2] = v, v+1
					case 3:
						stmts = []string{fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'm'), (%d, %d, 'n') ON DUPLICATE KEY UPDATE v = VALUES(v)", id, v, id+100, v)}
						writes[id], writes[id+100] = v, v
					}
					led.mu.Lock()
					for k, val := range writes {
						led.inflight[k] = val
					}
					led.mu.Unlock()
					var err error
					for _, q := range stmts {
						if _, err = query(s, q); err != nil {
							break
						}
					}
					led.mu.Lock()
					for k, val := range writes {
						if err == nil {
							led.acked[k] = val
						}
						// After an error the write may still be in the log (outcome follows the log):
						// keep it as in flight until the crash check.
						if err == nil {
							delete(led.inflight, k)
						} else {
							led.inflight[k] = val
						}
					}
					led.mu.Unlock()
					if err != nil {
						return
					}
				}
			}(w)
		}
		if mode == 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := st.db.NewSession(99, "root", "localhost", "c")
				defer s.Close()
				_, _ = query(s, "CREATE INDEX kw ON t (w)")
				_, _ = query(s, "DROP INDEX kw ON t")
			}()
		}
		if rng.Intn(4) == 0 {
			// Flush the engine at some point, so recovery starts from a non-zero applied index.
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = st.eng.Flush()
			}()
		}
		if mode != 1 {
			time.Sleep(time.Duration(rng.Intn(3000)) * time.Microsecond)
			crashNow()
		}
		// Wait for the crash point (mode 1) or the workers.
		deadline := time.Now().Add(5 * time.Second)
		for {
			crashMu.Lock()
			done := crashed != nil
			crashMu.Unlock()
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		crashNow() // if the hook never fired (no commit reached it), crash now
		armed.Store(0)
		cancel()
		wg.Wait()
		st.abandon()
		fs = crashed
		st = open(t, fs, afterSync)
		check(t, cycle, seed, st, ackedAtCrash, inflightAtCrash, led)
		nextID += workers * 1000
	}
}

// check verifies a recovered node against the ledger and against a fresh replay of its log.
func check(t *testing.T, cycle int, seed int64, st *stack, acked, inflight map[int64]int64, led *ledger) {
	t.Helper()
	s := st.db.NewSession(2, "root", "localhost", "c")
	defer s.Close()
	got, err := query(s, "SELECT id, v FROM t")
	if err != nil {
		t.Fatalf("cycle %d (seed %d): read after recovery: %v", cycle, seed, err)
	}
	state := map[int64]int64{}
	for _, r := range got {
		state[r[0].I] = r[1].I
	}
	for id, v := range acked {
		have, ok := state[id]
		alt, maybe := inflight[id]
		okVal := (v == -1 && !ok) || (v != -1 && ok && have == v)
		if !okVal && maybe {
			okVal = (alt == -1 && !ok) || (alt != -1 && ok && have == alt)
		}
		if !okVal {
			// The ledger entry may have been acknowledged after the clone was taken; that is only
			// possible if it was in flight at the crash, which the inflight map covers.
			t.Fatalf("cycle %d (seed %d): row %d = (%d, present %v), acknowledged %d (in flight %v %d)", cycle, seed, id, have, ok, v, maybe, alt)
		}
	}
	// Reset the ledger to what survived, so the next cycle builds on the recovered state.
	led.mu.Lock()
	led.acked = map[int64]int64{}
	for id := range acked {
		if v, ok := state[id]; ok {
			led.acked[id] = v
		} else {
			led.acked[id] = -1
		}
	}
	for id, v := range state {
		led.acked[id] = v
	}
	led.inflight = map[int64]int64{}
	led.mu.Unlock()
	// The index agrees with the rows.
	ix, err := query(s, "SELECT COUNT(*) FROM t FORCE INDEX (kv) WHERE v >= 0")
	if err != nil || len(ix) != 1 || ix[0][0].I != int64(len(state)) {
		t.Fatalf("cycle %d (seed %d): index kv has %v entries (%v), table has %d rows", cycle, seed, ix, err, len(state))
	}
	if cycle%50 == 0 {
		compareWithReplay(t, cycle, seed, st)
	}
}

// compareWithReplay replays the whole log into a fresh engine and compares every key.
func compareWithReplay(t *testing.T, cycle int, seed int64, st *stack) {
	t.Helper()
	fresh, err := engine.Open("/fresh", engine.Options{FS: vfs.NewMem(), DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	applied := st.node.Applied()
	ents, err := st.lg.Entries(1, applied+1, 1<<62)
	if err != nil {
		t.Fatalf("cycle %d (seed %d): read log: %v", cycle, seed, err)
	}
	b := fresh.NewBatch()
	replay := sql.NewApplier()
	var last uint64
	for _, e := range ents {
		if e.Type == 0 && len(e.Data) >= 8 {
			rec, _, _, err := repl.EntryRecord(e.Data)
			if err != nil {
				t.Fatalf("cycle %d: entry %d: %v", cycle, e.Index, err)
			}
			if txn.RecordReadsState(rec) && last > 0 {
				// DDL records read the engine: everything before them must be in it.
				if err := fresh.Apply(b, last, false); err != nil {
					t.Fatal(err)
				}
				b.Close()
				b = fresh.NewBatch()
			}
			if err := replay.ApplyRecord(rec, fresh, b); err != nil {
				t.Fatalf("cycle %d: replay entry %d: %v", cycle, e.Index, err)
			}
		}
		last = e.Index
	}
	if err := fresh.Apply(b, applied, false); err != nil {
		t.Fatal(err)
	}
	b.Close()
	diff, err := engine.Diff(st.eng, fresh, []byte{0x01}, []byte{0xff})
	if err != nil {
		t.Fatal(err)
	}
	if diff != "" {
		t.Fatalf("cycle %d (seed %d): engine differs from a replay of the log: %s", cycle, seed, diff)
	}
}
