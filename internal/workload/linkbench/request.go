package linkbench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// The request phase's statements, as LinkBench's MySQL link store issues
// them (LinkStoreSql / LinkStoreMysql). Link writes run in explicit
// transactions; reads and node operations in autocommit.
const (
	stAddLink = iota
	stIncCount
	stDecCount
	stLinkForUpdate
	stUpdateLink
	stHideLink
	stCountLink
	stGetLinkList
	stAddNode
	stUpdateNode
	stDeleteNode
	stGetNode
	numStmts
)

var stmtText = [numStmts]string{
	stAddLink: "INSERT INTO linktable (id1, id2, link_type, visibility, data, time, version) VALUES (?, ?, ?, 1, ?, ?, 0)" +
		" ON DUPLICATE KEY UPDATE visibility = VALUES(visibility)",
	stIncCount: "INSERT INTO counttable (id, link_type, count, time, version) VALUES (?, ?, 1, ?, 0)" +
		" ON DUPLICATE KEY UPDATE count = count + ?, time = VALUES(time), version = version + 1",
	stDecCount:      "UPDATE counttable SET count = count - 1, time = ?, version = version + 1 WHERE id = ? AND link_type = ?",
	stLinkForUpdate: "SELECT visibility FROM linktable WHERE link_type = ? AND id1 = ? AND id2 = ? FOR UPDATE",
	stUpdateLink:    "UPDATE linktable SET visibility = 1, data = ?, time = ?, version = version + 1 WHERE link_type = ? AND id1 = ? AND id2 = ?",
	stHideLink:      "UPDATE linktable SET visibility = 0 WHERE link_type = ? AND id1 = ? AND id2 = ?",
	stCountLink:     "SELECT count FROM counttable WHERE id = ? AND link_type = ?",
	stGetLinkList: "SELECT id1, id2, link_type, visibility, data, time, version FROM linktable FORCE INDEX(id1_type)" +
		" WHERE id1 = ? AND link_type = ? AND time >= ? AND time <= ? AND visibility = 1 ORDER BY time DESC LIMIT ? OFFSET ?",
	stAddNode:    "INSERT INTO nodetable (type, version, time, data) VALUES (?, 1, ?, ?)",
	stUpdateNode: "UPDATE nodetable SET version = version + 1, time = ?, data = ? WHERE id = ? AND type = ?",
	stDeleteNode: "DELETE FROM nodetable WHERE id = ? AND type = ?",
	stGetNode:    "SELECT id, type, version, time, data FROM nodetable WHERE id = ?",
}

// multigetHead starts getlink's query; the id2 list is appended as literals
// (LinkStoreMysql builds it as text too).
const multigetHead = "SELECT id1, id2, link_type, visibility, data, time, version FROM linktable WHERE link_type = "

// OpReport is one operation's figures over the request phase. Count is the
// operations that succeeded; Errors those that failed (after retries);
// Retries the deadlock / lock-wait-timeout retries; RowsPerOp the rows
// returned (reads) or written (writes) per successful operation.
type OpReport struct {
	Op           string   `json:"op"`
	Count        uint64   `json:"count"`
	Errors       uint64   `json:"errors"`
	Retries      uint64   `json:"retries"`
	RowsPerOp    float64  `json:"rows_per_op"`
	P50Ms        float64  `json:"p50_ms"`
	P95Ms        float64  `json:"p95_ms"`
	P99Ms        float64  `json:"p99_ms"`
	MaxMs        float64  `json:"max_ms"`
	ErrorSamples []string `json:"error_samples,omitempty"`
}

// RequestReport is the request phase.
type RequestReport struct {
	Threads   int        `json:"threads"`
	Client    string     `json:"client"` // jdbc (LinkStoreMysql's text statements), prepared, or text
	Prepared  bool       `json:"prepared"`
	Seconds   float64    `json:"seconds"`
	Ops       uint64     `json:"ops"`
	Errors    uint64     `json:"errors"`
	Retries   uint64     `json:"retries"`
	OpsPerSec float64    `json:"ops_per_sec"`
	Mix       []MixShare `json:"mix"`
	PerOp     []OpReport `json:"per_op"`
}

// MixShare is one operation's configured percentage.
type MixShare struct {
	Op      string  `json:"op"`
	Percent float64 `json:"percent"`
}

func requests(ctx context.Context, db *sql.DB, wl *workload) (*RequestReport, error) {
	cfg := wl.cfg
	workers := make([]*worker, cfg.Threads)
	for i := range workers {
		w := &worker{wl: wl, db: db, id: i, rng: rand.New(rand.NewPCG(cfg.Seed, 1000+uint64(i)))}
		if err := w.connect(ctx); err != nil {
			for _, o := range workers[:i] {
				o.close()
			}
			return nil, fmt.Errorf("linkbench: request connection %d: %w", i, err)
		}
		workers[i] = w
	}
	limit := fmt.Sprint(cfg.Duration)
	if cfg.Requests > 0 {
		limit += fmt.Sprintf(", at most %d requests", cfg.Requests)
	}
	cfg.progressf("requests: %d threads, %s", cfg.Threads, limit)
	var issued, done atomic.Uint64
	start := time.Now()
	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = start.Add(cfg.Duration)
	}
	stopProgress := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-t.C:
				el := time.Since(start).Seconds()
				cfg.progressf("requests: %.0f s, %d ops, %.0f ops/s", el, done.Load(), float64(done.Load())/el)
			}
		}
	}()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if !deadline.IsZero() && !time.Now().Before(deadline) {
					return
				}
				if cfg.Requests > 0 && issued.Add(1) > cfg.Requests {
					return
				}
				w.one(ctx)
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	for _, w := range workers {
		w.close()
	}
	rep := &RequestReport{Threads: cfg.Threads, Client: cfg.client(), Prepared: cfg.Prepared && !cfg.JDBC, Seconds: elapsed.Seconds()}
	for _, op := range Ops() {
		rep.Mix = append(rep.Mix, MixShare{op.String(), cfg.Mix[op]})
		var s opStats
		for _, w := range workers {
			s.merge(&w.stats[op])
		}
		or := OpReport{Op: op.String(), Count: s.hist.Count(), Errors: s.errors, Retries: s.retries,
			P50Ms: millis(s.hist.Quantile(0.5)), P95Ms: millis(s.hist.Quantile(0.95)), P99Ms: millis(s.hist.Quantile(0.99)),
			MaxMs: millis(s.hist.Max()), ErrorSamples: s.samples}
		if or.Count > 0 {
			or.RowsPerOp = float64(s.rows) / float64(or.Count)
		}
		rep.PerOp = append(rep.PerOp, or)
		rep.Ops += or.Count
		rep.Errors += or.Errors
		rep.Retries += or.Retries
	}
	rep.OpsPerSec = float64(rep.Ops) / elapsed.Seconds()
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return rep, nil
}

// millis is d in milliseconds, rounded to the microsecond, for the report.
func millis(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// worker is one request-phase connection.
type worker struct {
	wl    *workload
	db    *sql.DB
	id    int
	rng   *rand.Rand
	conn  *sql.Conn // the read-write connection in the JDBC mode
	ro    *sql.Conn // the JDBC mode's read-only (autocommit) connection
	stmts [numStmts]*sql.Stmt
	stats [numOps]opStats
	tail  []tailLink // getlinklist results cut at RangeLimit: there may be older links
	sb    strings.Builder
}

type tailLink struct {
	id1, linkType, time uint64
}

func (w *worker) connect(ctx context.Context) error {
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	w.conn = conn
	if w.wl.cfg.JDBC {
		conn.Close()
		w.conn = nil
		return w.connectJDBC(ctx)
	}
	if !w.wl.cfg.Prepared {
		return nil
	}
	for i, q := range stmtText {
		if w.stmts[i], err = conn.PrepareContext(ctx, q); err != nil {
			w.close()
			return fmt.Errorf("prepare %q: %w", q, err)
		}
	}
	return nil
}

func (w *worker) close() {
	for i, s := range w.stmts {
		if s != nil {
			s.Close()
			w.stmts[i] = nil
		}
	}
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
	if w.ro != nil {
		w.ro.Close()
		w.ro = nil
	}
}

func (w *worker) exec(ctx context.Context, st int, args ...any) (sql.Result, error) {
	if s := w.stmts[st]; s != nil {
		return s.ExecContext(ctx, args...)
	}
	return w.conn.ExecContext(ctx, stmtText[st], args...)
}

func (w *worker) query(ctx context.Context, st int, args ...any) (*sql.Rows, error) {
	if s := w.stmts[st]; s != nil {
		return s.QueryContext(ctx, args...)
	}
	return w.conn.QueryContext(ctx, stmtText[st], args...)
}

// affected runs a write and returns its affected-row count.
func (w *worker) affected(ctx context.Context, st int, args ...any) (int64, error) {
	res, err := w.exec(ctx, st, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// retryable: deadlock or lock wait timeout; the transaction is retried.
func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == sqlerr.ErrLockDeadlock || me.Number == sqlerr.ErrLockWaitTimeout)
}

// one runs a randomly chosen operation and records it.
func (w *worker) one(ctx context.Context) {
	op := w.wl.chooser.Pick(w.rng.Float64() * 100)
	s := &w.stats[op]
	body := w.body(op)
	start := time.Now()
	for attempt := 0; ; attempt++ {
		rows, err := body(ctx)
		if err == nil {
			s.hist.Record(time.Since(start))
			s.rows += uint64(rows)
			return
		}
		if ctx.Err() != nil {
			return // interrupted: not the server's failure
		}
		w.recover(ctx, err)
		if w.conn == nil { // interrupted while reconnecting
			return
		}
		if retryable(err) && attempt < w.wl.cfg.MaxRetries {
			s.retries++
			time.Sleep(time.Duration(w.rng.Int64N(int64(attempt+1) * int64(time.Millisecond))))
			continue
		}
		s.addError(err)
		return
	}
}

// recover rolls back after a failed operation, and replaces the connection
// if the driver lost it (or the rollback fails).
func (w *worker) recover(ctx context.Context, err error) {
	if !errors.Is(err, driver.ErrBadConn) && !errors.Is(err, mysql.ErrInvalidConn) {
		if _, rerr := w.conn.ExecContext(ctx, "ROLLBACK"); rerr == nil {
			return
		}
	}
	w.close()
	for ctx.Err() == nil {
		if cerr := w.connect(ctx); cerr == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// body draws the operation's parameters once (a retry repeats the same
// operation) and returns the function that runs it, reporting rows.
func (w *worker) body(op Op) func(context.Context) (int64, error) {
	if w.wl.cfg.JDBC {
		return w.bodyJDBC(op)
	}
	wl, rng := w.wl, w.rng
	linkType := func() uint64 { return DefaultLinkType + rng.Uint64N(LinkTypeCount) }
	switch op {
	case OpAddLink:
		id1 := wl.linkWr.Next(rng)
		lt := linkType()
		id2 := w.chooseID2(id1, lt, pAddExist)
		data := randData(rng, linkDataSize.Choose(rng))
		return func(ctx context.Context) (int64, error) {
			return w.txn(ctx, func() (int64, error) { return w.addLink(ctx, id1, id2, lt, data) })
		}
	case OpUpdateLink:
		id1 := wl.linkWr.Next(rng)
		lt := linkType()
		id2 := w.chooseID2(id1, lt, pUpdateExist)
		data := randData(rng, linkDataSize.Choose(rng))
		return func(ctx context.Context) (int64, error) {
			return w.txn(ctx, func() (int64, error) { return w.updateLink(ctx, id1, id2, lt, data) })
		}
	case OpDeleteLink:
		id1 := wl.linkWr.Next(rng)
		lt := linkType()
		id2 := w.chooseID2(id1, lt, pDeleteExist)
		return func(ctx context.Context) (int64, error) {
			return w.txn(ctx, func() (int64, error) { return w.deleteLink(ctx, id1, id2, lt) })
		}
	case OpCountLink:
		id1 := wl.linkRead.Next(rng)
		lt := linkType()
		return func(ctx context.Context) (int64, error) {
			return w.scan(w.query(ctx, stCountLink, id1, lt))
		}
	case OpGetLink:
		id1 := wl.linkRead.Next(rng)
		lt := linkType()
		n := multigetDist.Quantile(rng.Float64())
		q := w.multigetQuery(id1, lt, n)
		return func(ctx context.Context) (int64, error) { return w.scan(w.conn.QueryContext(ctx, q)) }
	case OpGetLinkList:
		if len(w.tail) > 0 && rng.Float64() < pHistoryGetLinkList {
			i := rng.IntN(len(w.tail))
			t := w.tail[i]
			return func(ctx context.Context) (int64, error) { return w.linkList(ctx, t.id1, t.linkType, t.time, 1, i) }
		}
		id1 := wl.linkRead.Next(rng)
		lt := linkType()
		return func(ctx context.Context) (int64, error) { return w.linkList(ctx, id1, lt, math.MaxInt64, 0, -1) }
	case OpAddNode:
		data := randData(rng, nodeDataSize.Choose(rng))
		return func(ctx context.Context) (int64, error) {
			return w.affected(ctx, stAddNode, NodeType, uint64(time.Now().Unix()), data)
		}
	case OpUpdateNode:
		id := wl.nodeUpd.Next(rng)
		data := randData(rng, nodeDataSize.Choose(rng))
		return func(ctx context.Context) (int64, error) {
			return w.affected(ctx, stUpdateNode, uint64(time.Now().Unix()), data, id, NodeType)
		}
	case OpDeleteNode:
		id := wl.nodeDel.Next(rng)
		return func(ctx context.Context) (int64, error) { return w.affected(ctx, stDeleteNode, id, NodeType) }
	default: // OpGetNode
		id := wl.nodeRead.Next(rng)
		return func(ctx context.Context) (int64, error) { return w.scan(w.query(ctx, stGetNode, id)) }
	}
}

// chooseID2 is ID2Chooser.chooseForOp: an id2 in [id1, id1 + links/p), so
// that with probability ~p it is one of the links loaded for (id1, type).
func (w *worker) chooseID2(id1, linkType uint64, p float64) uint64 {
	n := w.wl.linkCount(id1, linkType)
	r := max(uint64(math.Round(float64(n)/p)), 1)
	return id1 + w.rng.Uint64N(r)
}

func (w *worker) multigetQuery(id1, linkType uint64, n int) string {
	ids := make([]uint64, 0, n)
	seen := make(map[uint64]bool, n)
	for iter := 0; len(ids) < n && iter < maxUniqIters; iter++ {
		id2 := w.chooseID2(id1, linkType, pGetExist)
		if !seen[id2] {
			seen[id2] = true
			ids = append(ids, id2)
		}
	}
	sb := &w.sb
	sb.Reset()
	sb.WriteString(multigetHead)
	sb.WriteString(strconv.FormatUint(linkType, 10))
	sb.WriteString(" AND id1 = ")
	sb.WriteString(strconv.FormatUint(id1, 10))
	sb.WriteString(" AND id2 IN (")
	for i, id := range ids {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatUint(id, 10))
	}
	sb.WriteByte(')')
	return sb.String()
}

// txn runs body between BEGIN and COMMIT on the worker's connection (the
// caller rolls back on error).
func (w *worker) txn(ctx context.Context, body func() (int64, error)) (int64, error) {
	if _, err := w.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	n, err := body()
	if err != nil {
		return 0, err
	}
	if _, err := w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return 0, err
	}
	return n, nil
}

// addLink inserts the link visible, or makes an existing one visible
// (affected rows: 1 inserted, 2 updated, 0 already visible). When the link
// became visible its count goes up; when it already existed its payload is
// rewritten, as LinkStoreMysql.addLink does.
func (w *worker) addLink(ctx context.Context, id1, id2, lt uint64, data string) (int64, error) {
	now := uint64(time.Now().UnixMilli())
	n, err := w.affected(ctx, stAddLink, id1, id2, lt, data, now)
	if err != nil {
		return 0, err
	}
	switch n {
	case 0, 1, 2:
	default:
		return 0, fmt.Errorf("addlink: INSERT ... ON DUPLICATE KEY UPDATE affected %d rows, want 0, 1 or 2", n)
	}
	rows := int64(1)
	if n == 1 || n == 2 {
		if _, err := w.exec(ctx, stIncCount, id1, lt, now, 1); err != nil {
			return 0, err
		}
		rows++
	}
	if n == 0 || n == 2 {
		if _, err := w.exec(ctx, stUpdateLink, data, now, lt, id1, id2); err != nil {
			return 0, err
		}
	}
	return rows, nil
}

// visibilityForUpdate locks the link's row; found is false if there is none.
func (w *worker) visibilityForUpdate(ctx context.Context, id1, id2, lt uint64) (vis int, found bool, err error) {
	rows, err := w.query(ctx, stLinkForUpdate, lt, id1, id2)
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&vis); err != nil {
			return 0, false, err
		}
		found = true
		if vis != visibilityDefault && vis != visibilityHidden {
			return 0, false, fmt.Errorf("link (%d, %d, %d) has visibility %d", id1, lt, id2, vis)
		}
	}
	return vis, found, rows.Err()
}

// updateLink rewrites an existing link (visible again if it was hidden,
// counting it), or adds it if it does not exist (LinkStoreSql.newLinkLoop).
func (w *worker) updateLink(ctx context.Context, id1, id2, lt uint64, data string) (int64, error) {
	vis, found, err := w.visibilityForUpdate(ctx, id1, id2, lt)
	if err != nil {
		return 0, err
	}
	if !found {
		return w.addLink(ctx, id1, id2, lt, data)
	}
	now := uint64(time.Now().UnixMilli())
	n, err := w.affected(ctx, stUpdateLink, data, now, lt, id1, id2)
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, fmt.Errorf("updatelink: UPDATE of the locked link (%d, %d, %d) affected %d rows", id1, lt, id2, n)
	}
	if vis == visibilityHidden {
		if _, err := w.exec(ctx, stIncCount, id1, lt, now, 1); err != nil {
			return 0, err
		}
		return 2, nil
	}
	return 1, nil
}

// deleteLink hides a visible link and decrements its count (LinkBench's
// default delete: expunge off); a hidden or missing link is left alone.
func (w *worker) deleteLink(ctx context.Context, id1, id2, lt uint64) (int64, error) {
	vis, found, err := w.visibilityForUpdate(ctx, id1, id2, lt)
	if err != nil || !found || vis != visibilityDefault {
		return 0, err
	}
	n, err := w.affected(ctx, stHideLink, lt, id1, id2)
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, fmt.Errorf("deletelink: UPDATE of the locked link (%d, %d, %d) affected %d rows", id1, lt, id2, n)
	}
	n, err = w.affected(ctx, stDecCount, uint64(time.Now().UnixMilli()), id1, lt)
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, fmt.Errorf("deletelink: counttable row (%d, %d) of a visible link: UPDATE affected %d rows", id1, lt, n)
	}
	return 2, nil
}

// linkList is getlinklist: the newest visible links of (id1, type) at or
// before maxTime. tailIdx >= 0 marks a history query for w.tail[tailIdx].
// A full page (RangeLimit rows) records its oldest link for later history
// queries, as LinkBenchRequest does.
func (w *worker) linkList(ctx context.Context, id1, lt, maxTime uint64, offset, tailIdx int) (int64, error) {
	rows, err := w.query(ctx, stGetLinkList, id1, lt, 0, maxTime, RangeLimit, offset)
	return w.collectLinkList(rows, err, tailIdx)
}

// collectLinkList reads a getlinklist result; a full page (RangeLimit rows) records its oldest
// link for later history queries, and a history query (tailIdx >= 0) updates or drops its entry.
func (w *worker) collectLinkList(rows *sql.Rows, err error, tailIdx int) (int64, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	var last tailLink
	for rows.Next() {
		var r linkRow
		if err := rows.Scan(&r.id1, &r.id2, &r.linkType, &r.visibility, &r.data, &r.time, &r.version); err != nil {
			return 0, err
		}
		last = tailLink{r.id1, r.linkType, r.time}
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	full := n >= RangeLimit
	switch {
	case tailIdx >= 0 && tailIdx < len(w.tail) && full:
		w.tail[tailIdx] = last
	case tailIdx >= 0 && tailIdx < len(w.tail):
		w.tail[tailIdx] = w.tail[len(w.tail)-1]
		w.tail = w.tail[:len(w.tail)-1]
	case full:
		if len(w.tail) < tailHistoryLimit {
			w.tail = append(w.tail, last)
		} else {
			w.tail[w.rng.IntN(len(w.tail))] = last
		}
	}
	return n, nil
}

type linkRow struct {
	id1, id2, linkType uint64
	visibility         int
	data               sql.RawBytes
	time               uint64
	version            uint64
}

// scan reads every row of a result and returns how many there were.
func (w *worker) scan(rows *sql.Rows, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = new(sql.RawBytes)
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return 0, err
		}
		n++
	}
	return n, rows.Err()
}
