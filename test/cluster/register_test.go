package cluster

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// regInput is one register operation on row key: a read, a write of value, or a compare-and-set
// from expect to value.
type regInput struct {
	key           int
	op            string // "read", "write", "cas"
	value, expect int64
}

// regOutput is what the client saw. unknown: the outcome is not known (the operation may or may
// not have taken effect); its return time is then after everything else. The test resolves these
// from reg.w before checking, but the model keeps their meaning.
type regOutput struct {
	value   int64 // read
	ok      bool  // cas: whether the row matched
	unknown bool
}

// registerModel is a set of integer registers (one per row) starting at 0. Linearizability is
// local (a history is linearizable iff each object's is), so each row's operations are checked
// on their own: that keeps the search small however long the test runs.
var registerModel = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range ops {
			k := op.Input.(regInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Ints(keys)
		out := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			out[i] = byKey[k]
		}
		return out
	},
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(int64), input.(regInput), output.(regOutput)
		switch in.op {
		case "read":
			return out.value == st, st
		case "write":
			return true, in.value
		case "cas":
			if out.unknown {
				// Linearized here it took effect iff the value matched; that it may not have taken
				// effect at all is covered by its open-ended return (it can linearize last).
				if st == in.expect {
					return true, in.value
				}
				return true, st
			}
			if out.ok {
				return st == in.expect, in.value
			}
			return st != in.expect, st
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		res := ""
		switch {
		case out.unknown:
			res = " -> ?"
		case in.op == "read":
			res = fmt.Sprintf(" -> %d", out.value)
		case in.op == "cas":
			res = fmt.Sprintf(" -> %v", out.ok)
		}
		switch in.op {
		case "write":
			return fmt.Sprintf("row %d: write(%d)%s", in.key, in.value, res)
		case "cas":
			return fmt.Sprintf("row %d: cas(%d->%d)%s", in.key, in.expect, in.value, res)
		}
		return fmt.Sprintf("row %d: read()%s", in.key, res)
	},
}

// history records operations with call and return times relative to its start (monotonic clock).
type history struct {
	mu      sync.Mutex
	start   time.Time
	ops     []porcupine.Operation // Metadata: the node, and the error of an unknown outcome
	refusal map[int64]bool        // values of writes their clients were told did not commit
}

func (h *history) refused(v int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refusal == nil {
		h.refusal = map[int64]bool{}
	}
	h.refusal[v] = true
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

func (h *history) add(client int, in regInput, out regOutput, call, ret int64, meta string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret, Metadata: meta})
}

// regClient does random reads, writes and compare-and-sets of the register through the leader.
type regClient struct {
	id       int
	r        *router
	rng      *rand.Rand
	h        *history
	errs     *errLog
	row      *atomic.Int64 // the row the test currently works on
	readOnly bool
	burst    *atomic.Int64 // until this time (unix ns) a reader does not pause between reads
	lastKey  int
	last     int64 // last value this client read or wrote in lastKey: what its compare-and-sets expect
	seq      int64
}

func (rc *regClient) run(stop *atomic.Bool) {
	for !stop.Load() {
		n, gen := rc.r.leader()
		if n == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err := rc.once(n); err != nil {
			rc.r.failed(n, gen, err)
			time.Sleep(time.Duration(5+rc.rng.Intn(20)) * time.Millisecond)
		} else if rc.readOnly && time.Now().UnixNano() > rc.burst.Load() {
			// Reads are cheap: unpaced, two readers would take the CPU from the writers and make
			// the history too long to check quickly. They go unpaced only around a SIGCONT, when
			// a resumed leader may answer before it learns it was replaced: that moment lasts a
			// few milliseconds.
			time.Sleep(time.Duration(rc.rng.Intn(2000)) * time.Microsecond)
		}
	}
}

// errNotLeaderRead is a read refused by this test because the node did not claim to lead.
var errNotLeaderRead = fmt.Errorf("read served with @@read_only = 1")

func (rc *regClient) once(n *node) error {
	ctx := context.Background()
	// Unique written values: a read names exactly the write it saw.
	rc.seq++
	val := int64(rc.id)*1_000_000 + rc.seq
	key := int(rc.row.Load())
	if key != rc.lastKey {
		rc.lastKey, rc.last = key, 0
	}
	p := rc.rng.Intn(10)
	if rc.readOnly {
		p = 0
	}
	switch {
	case p < 4:
		call := rc.h.now()
		var v, ro int64
		// @@read_only is evaluated by the same statement: 0 means the node served this read as the
		// leader. Reads a node serves as a follower may be stale by design, so they are dropped:
		// the rest of the history is checked just as strictly without them.
		err := n.db.QueryRowContext(ctx, "SELECT v, @@read_only FROM reg.r WHERE id = ?", key).Scan(&v, &ro)
		ret := rc.h.now()
		if err != nil {
			if classify(err) == unexpected {
				rc.errs.add("client %d read on %v: %v", rc.id, n, err)
			}
			return err // a failed read has no effect: not recorded
		}
		if ro != 0 {
			return errNotLeaderRead
		}
		rc.last = v
		rc.h.add(rc.id, regInput{key: key, op: "read"}, regOutput{value: v}, call, ret, n.String())
		return nil
	case p < 7:
		return rc.write(ctx, n, regInput{key: key, op: "write", value: val})
	default:
		return rc.write(ctx, n, regInput{key: key, op: "cas", value: val, expect: rc.last})
	}
}

// probe is the failover clock's probe: a recorded write of the current row, bounded in time.
func (rc *regClient) probe(n *node) error {
	rc.seq++
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return rc.write(ctx, n, regInput{key: int(rc.row.Load()), op: "write", value: int64(rc.id)*1_000_000 + rc.seq})
}

// write runs a write or compare-and-set as a transaction that also inserts the value into reg.w
// when the row changed. Afterwards reg.w says exactly which writes took effect, whatever their
// clients were told: an acknowledged write missing from it was lost, a refused one present in it
// was wrongly refused, and an unknown outcome is resolved.
func (rc *regClient) write(ctx context.Context, n *node, in regInput) error {
	call := rc.h.now()
	matched, stage, err := rc.txn(ctx, n, in)
	ret := rc.h.now()
	o := classify(err)
	if o == unexpected {
		rc.errs.add("client %d %s on %v, %s: %v", rc.id, in.op, n, stage, err)
	}
	if err != nil && stage != "commit" {
		rc.h.refused(in.value) // COMMIT was never sent
		return err
	}
	switch o {
	case committed:
		if matched {
			rc.last = in.value
		}
		rc.h.add(rc.id, in, regOutput{ok: matched}, call, ret, n.String())
		return nil
	case notCommitted:
		rc.h.refused(in.value)
		return err
	}
	// Unknown outcome: it may take effect at any time after its call, or never (reg.w decides).
	rc.h.add(rc.id, in, regOutput{unknown: true}, call, math.MaxInt64, fmt.Sprintf("%v: %v", n, err))
	return err
}

// txn is write's transaction; matched says whether its UPDATE changed the row.
func (rc *regClient) txn(ctx context.Context, n *node, in regInput) (matched bool, stage string, err error) {
	tx, err := n.db.BeginTx(ctx, nil)
	if err != nil {
		return false, "begin", err
	}
	q, args := "UPDATE reg.r SET v = ? WHERE id = ?", []any{in.value, in.key}
	if in.op == "cas" {
		q, args = q+" AND v = ?", append(args, in.expect)
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		_ = tx.Rollback()
		return false, "update", err
	}
	affected, err := res.RowsAffected()
	if err != nil {
		_ = tx.Rollback()
		return false, "update", err
	}
	if affected == 1 {
		if _, err := tx.ExecContext(ctx, "INSERT INTO reg.w (val, row_id) VALUES (?, ?)", in.value, in.key); err != nil {
			_ = tx.Rollback()
			return false, "insert", err
		}
	}
	return affected == 1, "commit", tx.Commit()
}

func TestRegisterLinearizable(t *testing.T) {
	trials := envInt(t, "KILN_CLUSTER_REGISTER_TRIALS", 8)
	rng := rand.New(rand.NewSource(seed(t)))
	c := newCluster(t, 3)
	// The clients move to a fresh row every two failures, so each row's history (checked on its
	// own) spans a kill -9 and a SIGSTOP and stays small enough for an exact check.
	const failuresPerRow = 2
	rows := trials/failuresPerRow + 1
	c.mustExec("CREATE DATABASE reg")
	c.mustExec("CREATE TABLE reg.r (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	c.mustExec("CREATE TABLE reg.w (val BIGINT PRIMARY KEY, row_id INT NOT NULL)")
	var vals []string
	for k := 1; k <= rows; k++ {
		vals = append(vals, fmt.Sprintf("(%d, 0)", k))
	}
	c.mustExec("INSERT INTO reg.r VALUES " + strings.Join(vals, ", "))

	h := &history{start: time.Now()}
	t.Logf("history clock starts at %s (operations show wall-clock times, to match the node logs)", h.start.Format("15:04:05.000000"))
	errs := &errLog{}
	clock := &failoverClock{}
	var row, burst atomic.Int64
	row.Store(1)
	var stop atomic.Bool
	var wg sync.WaitGroup
	// Four clients read, write and compare-and-set; two only read. Each finds the leader on its own
	// (as separate application servers would) and stays with a node until it errs or answers as a
	// follower: a client whose read was answered by a resumed leader goes on asking it.
	const mixed, readers = 4, 2
	for i := 0; i < mixed+readers; i++ {
		rc := &regClient{id: i, r: newRouter(c), rng: rand.New(rand.NewSource(rng.Int63())), h: h, errs: errs,
			row: &row, readOnly: i >= mixed, burst: &burst}
		wg.Add(1)
		go func() { defer wg.Done(); rc.run(&stop) }()
	}
	// The failover clock's probe is a recorded write of the current row on the new leader. It
	// completes while a frozen old leader is still frozen, so every read that leader answers after
	// it resumes was sent after that write was acknowledged, and must see it (or something later).
	prober := &regClient{id: mixed + readers, rng: rand.New(rand.NewSource(rng.Int63())), h: h, errs: errs, row: &row}
	stopClients := func() {
		stop.Store(true)
		wg.Wait()
	}
	defer stopClients()

	var failovers []time.Duration
	for trial := 0; trial < trials; trial++ {
		leader, err := c.waitConverged(60 * time.Second)
		if err != nil {
			t.Fatalf("before failure %d: %v", trial+1, err)
		}
		if trial > 0 && trial%failuresPerRow == 0 {
			row.Add(1)
		}
		time.Sleep(time.Duration(300+rng.Intn(500)) * time.Millisecond)
		// SIGSTOP first: a leader that freezes and resumes is where a stale read would come from.
		kill := trial%2 == 1
		what := map[bool]string{true: "kill -9", false: "SIGSTOP"}[kill]
		clock.begin(leader)
		at := time.Now()
		if kill {
			leader.kill9()
		} else {
			leader.pause()
		}
		d, err := clock.await(c, prober.probe, 60*time.Second)
		if err != nil {
			t.Fatalf("failure %d (%s of leader %v): %v", trial+1, what, leader, err)
		}
		failovers = append(failovers, d)
		if kill {
			time.Sleep(time.Duration(100+rng.Intn(400)) * time.Millisecond)
			t.Logf("failure %d: %s of leader %v at %s (row %d); restarted at %s", trial+1, what, leader,
				at.Format("15:04:05.000"), row.Load(), time.Now().Format("15:04:05.000"))
			leader.start()
			if err := leader.waitHTTP("/health", 60*time.Second); err != nil {
				t.Fatalf("restart after failure %d: %v", trial+1, err)
			}
		} else {
			// Resume before the clients' read timeout (3 s): their reads queued on the frozen
			// leader are then answered by it, and they go on asking it.
			time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
			t.Logf("failure %d: %s of leader %v at %s (row %d); SIGCONT at %s", trial+1, what, leader,
				at.Format("15:04:05.000"), row.Load(), time.Now().Format("15:04:05.000000"))
			burst.Store(time.Now().Add(200 * time.Millisecond).UnixNano())
			leader.resume()
		}
	}
	time.Sleep(500 * time.Millisecond)
	stopClients()
	errs.check(t, "unexpected client errors")
	if trials > 0 {
		t.Logf("failover: %s", durationStats(failovers))
	}
	final := c.healAndSettle()
	c.sameOnAllNodes("SELECT id, v FROM reg.r ORDER BY id")
	took := c.sameOnAllNodes("SELECT val, row_id FROM reg.w ORDER BY val")
	h.resolve(t, took)
	// The final values, read on the leader after everything settled, close the history: every
	// operation whose outcome was unknown (and which took effect) returns before them.
	end := h.now()
	for i := range h.ops {
		if h.ops[i].Return == math.MaxInt64 {
			h.ops[i].Return = end
		}
	}
	for k := 1; k <= rows; k++ {
		var v int64
		if err := final.db.QueryRow("SELECT v FROM reg.r WHERE id = ?", k).Scan(&v); err != nil {
			t.Fatal(err)
		}
		h.add(mixed+readers+1, regInput{key: k, op: "read"}, regOutput{value: v}, end+1, end+2, "final read on "+final.String())
	}

	counts := map[string]int{}
	for _, op := range h.ops {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		k := in.op
		if out.unknown {
			k += "?"
		}
		counts[k]++
	}
	t.Logf("history: %d operations on %d rows %v", len(h.ops), rows, counts)
	// The commonest way to be non-linearizable, named plainly before porcupine's general verdict.
	if stale := h.staleReads(); len(stale) > 0 {
		t.Errorf("%d stale reads: a node answering with @@read_only = 0 returned a value that an acknowledged write had already replaced before the read was sent:\n%s",
			len(stale), strings.Join(stale, "\n"))
	}
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(registerModel, h.ops, 2*time.Minute)
	t.Logf("porcupine: %s in %v", res, time.Since(start).Round(time.Millisecond))
	switch res {
	case porcupine.Ok:
	case porcupine.Unknown:
		// Nothing is refuted, but nothing is proven either, and proving it is this test's job.
		t.Errorf("porcupine could not decide within its time limit (%d operations): linearizability not checked", len(h.ops))
	default:
		t.Errorf("the register history is not linearizable (%d operations)", len(h.ops))
		reportNonLinearizable(t, h, info)
	}
}

// resolve checks the history's writes against the values reg.w holds (rows of val, row_id): every
// acknowledged write (or matching compare-and-set) is there, none that was refused is, and none
// that nobody attempted. An operation of unknown outcome becomes one that took effect (at some
// time before the end) if its value is there, and is dropped if not.
func (h *history) resolve(t *testing.T, rows [][]string) {
	t.Helper()
	took := map[int64]bool{}
	for _, r := range rows {
		v, err := strconv.ParseInt(r[0], 10, 64)
		if err != nil {
			t.Fatalf("reg.w value %q: %v", r[0], err)
		}
		took[v] = true
	}
	var lost, refused []string
	attempted := map[int64]bool{}
	kept := h.ops[:0]
	resolved, dropped := 0, 0
	for _, op := range h.ops {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		if in.op == "read" {
			kept = append(kept, op)
			continue
		}
		attempted[in.value] = true
		switch {
		case out.unknown && took[in.value]:
			op.Output = regOutput{ok: true}
			resolved++
		case out.unknown:
			dropped++
			continue
		case out.ok && !took[in.value]:
			lost = append(lost, h.describe(op))
		}
		kept = append(kept, op)
	}
	h.ops = kept
	for v := range h.refusal {
		attempted[v] = true
		if took[v] {
			refused = append(refused, strconv.FormatInt(v, 10))
		}
	}
	var phantom []string
	for v := range took {
		if !attempted[v] {
			phantom = append(phantom, strconv.FormatInt(v, 10))
		}
	}
	t.Logf("writes of unknown outcome: %d took effect, %d did not", resolved, dropped)
	cut := func(s []string) string {
		if len(s) > 10 {
			s = append(s[:10], "...")
		}
		return strings.Join(s, "\n  ")
	}
	if len(lost) > 0 {
		t.Errorf("%d acknowledged writes are missing from reg.w (lost):\n  %s", len(lost), cut(lost))
	}
	if len(refused) > 0 {
		t.Errorf("%d writes took effect that their clients were told did not commit: %s", len(refused), cut(refused))
	}
	if len(phantom) > 0 {
		t.Errorf("%d values in reg.w that no client wrote: %s", len(phantom), cut(phantom))
	}
}

// staleReads finds reads that no linearization can explain, with the writes that prove it: read R
// returned v, the (unique) write W of v returned before some acknowledged write P of another value
// was called, and P returned before R was called. W precedes P precedes R in real time, so R must
// see P or a later value. (Unknown-outcome writes are never P; a read of a value only such a write
// wrote is left to porcupine.)
func (h *history) staleReads() []string {
	type write struct {
		op       porcupine.Operation
		call, rt int64
	}
	byKey := map[int][]write{}
	writer := map[[2]int64]write{} // (key, value) -> its acknowledged write
	for _, op := range h.ops {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		if out.unknown || in.op == "read" || (in.op == "cas" && !out.ok) {
			continue
		}
		w := write{op, op.Call, op.Return}
		byKey[in.key] = append(byKey[in.key], w)
		writer[[2]int64{int64(in.key), in.value}] = w
	}
	var out []string
	for k, ws := range byKey {
		// Sorted by return time, with the latest call among the writes returned so far: for a read
		// called at c, the newest write that surely precedes it.
		sort.Slice(ws, func(i, j int) bool { return ws[i].rt < ws[j].rt })
		latest := make([]write, len(ws))
		for i, w := range ws {
			latest[i] = w
			if i > 0 && latest[i-1].call > w.call {
				latest[i] = latest[i-1]
			}
		}
		for _, op := range h.ops {
			in, res := op.Input.(regInput), op.Output.(regOutput)
			if in.key != k || in.op != "read" {
				continue
			}
			i := sort.Search(len(ws), func(i int) bool { return ws[i].rt >= op.Call }) - 1
			if i < 0 {
				continue
			}
			p := latest[i]
			wrote := int64(-1) // the initial 0 precedes everything
			if w, ok := writer[[2]int64{int64(k), res.value}]; ok {
				wrote = w.rt
			} else if res.value != 0 {
				continue // written by an operation of unknown outcome
			}
			if p.op.Input.(regInput).value != res.value && p.call > wrote {
				if len(out) < 10 {
					out = append(out, fmt.Sprintf("  %s\n    but %s had returned before it was sent", h.describe(op), h.describe(p.op)))
				} else if len(out) == 10 {
					out = append(out, "  ...")
				}
			}
		}
	}
	return out
}

// reportNonLinearizable shows, for each row whose history is not linearizable, where the longest
// linearization found got stuck: the operations it placed last and the earliest ones it could not
// place. With KILN_CLUSTER_LOGDIR the whole history is written there, as text and as porcupine's
// HTML visualization.
func reportNonLinearizable(t *testing.T, h *history, info porcupine.LinearizationInfo) {
	t.Helper()
	// The partial linearizations are per partition, as indices into that partition's operations.
	parts := registerModel.Partition(h.ops)
	var b strings.Builder
	for p, partials := range info.PartialLinearizations() {
		ops := parts[p]
		var longest []int
		for _, l := range partials {
			if len(l) > len(longest) {
				longest = l
			}
		}
		if len(longest) == len(ops) {
			continue // this row's history is linearizable
		}
		fmt.Fprintf(&b, "row %d: the longest linearization places %d of its %d operations; the last ones placed:\n",
			ops[0].Input.(regInput).key, len(longest), len(ops))
		done := map[int]bool{}
		for i, id := range longest {
			done[id] = true
			if i >= len(longest)-8 {
				fmt.Fprintf(&b, "  %s\n", h.describe(ops[id]))
			}
		}
		var left []porcupine.Operation
		for id, op := range ops {
			if !done[id] {
				left = append(left, op)
			}
		}
		sort.Slice(left, func(i, j int) bool { return left[i].Call < left[j].Call })
		fmt.Fprintf(&b, "the earliest it could not place:\n")
		for i, op := range left {
			if i == 12 {
				break
			}
			fmt.Fprintf(&b, "  %s\n", h.describe(op))
		}
	}
	t.Log(b.String())
	if dir := os.Getenv("KILN_CLUSTER_LOGDIR"); dir != "" {
		_ = os.MkdirAll(dir, 0o755)
		p := filepath.Join(dir, "register-history.html")
		if err := porcupine.VisualizePath(registerModel, info, p); err == nil {
			t.Logf("history visualized in %s", p)
		}
		all := append([]porcupine.Operation(nil), h.ops...)
		sort.Slice(all, func(i, j int) bool { return all[i].Call < all[j].Call })
		var txt strings.Builder
		for _, op := range all {
			fmt.Fprintln(&txt, h.describe(op))
		}
		p = filepath.Join(dir, "register-history.txt")
		if err := os.WriteFile(p, []byte(txt.String()), 0o644); err == nil {
			t.Logf("history (by call time) in %s", p)
		}
	}
}

// describe shows an operation with wall-clock call and return times (to match the node logs).
func (h *history) describe(op porcupine.Operation) string {
	ts := func(d int64) string {
		if d == math.MaxInt64 {
			return "?"
		}
		return h.start.Add(time.Duration(d)).Format("15:04:05.000000")
	}
	return fmt.Sprintf("client %d [%s, %s] %s (%v)", op.ClientId, ts(op.Call), ts(op.Return),
		registerModel.DescribeOperation(op.Input, op.Output), op.Metadata)
}
