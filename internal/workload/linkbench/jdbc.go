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
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The JDBC mode (Config.JDBC, the default) sends what the original LinkBench sends: the
// statements of LinkStoreMysql (github.com/facebookarchive/linkbench, the MySQL store) as
// Connector/J puts them on the wire. LinkStoreMysql runs every statement through
// java.sql.Statement, so they are text statements (COM_QUERY) whatever useServerPrepStmts
// says: values are literals, and a payload is a quoted latin1 literal only when every byte is a
// letter or digit (stringLiteral), otherwise a hex literal x'..' (hexStringLiteral), which is
// what random bytes almost always get. Each requester has two connections, as LinkStoreMysql:
// a read-write one with autocommit off, whose transactions end in "; commit;" appended to their
// last statement or in a separate COMMIT (conn_rw.commit()), and a read-only one in autocommit.
// Both set character_set_results = NULL, as Connector/J does. The tables are latin1, as in the
// README's schema, and the payloads are random bytes in the ranges of FBWorkload.properties
// (MotifDataGenerator's repeated motifs are not modelled: the bytes are uniform).

// JDBCSchema is the README's schema with its DEFAULT CHARSET=latin1 (without the PARTITION BY).
var JDBCSchema = []string{
	`CREATE TABLE linktable (
  id1 BIGINT UNSIGNED NOT NULL DEFAULT 0,
  id2 BIGINT UNSIGNED NOT NULL DEFAULT 0,
  link_type BIGINT UNSIGNED NOT NULL DEFAULT 0,
  visibility TINYINT NOT NULL DEFAULT 0,
  data VARCHAR(255) NOT NULL DEFAULT '',
  time BIGINT UNSIGNED NOT NULL DEFAULT 0,
  version INT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (link_type, id1, id2),
  KEY id1_type (id1, link_type, visibility, time, id2, version, data)
) DEFAULT CHARSET=latin1`,
	`CREATE TABLE counttable (
  id BIGINT UNSIGNED NOT NULL DEFAULT 0,
  link_type BIGINT UNSIGNED NOT NULL DEFAULT 0,
  count INT NOT NULL DEFAULT 0,
  time BIGINT UNSIGNED NOT NULL DEFAULT 0,
  version BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (id, link_type)
) DEFAULT CHARSET=latin1`,
	`CREATE TABLE nodetable (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  type INT UNSIGNED NOT NULL,
  version BIGINT UNSIGNED NOT NULL,
  time INT UNSIGNED NOT NULL,
  data MEDIUMTEXT NOT NULL,
  PRIMARY KEY (id)
) DEFAULT CHARSET=latin1`,
}

// Payload byte ranges of FBWorkload.properties (link_datagen_*, node_datagen_*).
const (
	linkByteLo, linkByteHi = 32, 100
	nodeByteLo, nodeByteHi = 50, 220
)

// randBytes is n random bytes in [lo, hi].
func randBytes(rng *rand.Rand, n, lo, hi int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(lo + rng.IntN(hi-lo+1))
	}
	return b
}

// appendLiteral appends LinkStoreMysql.stringLiteral(b): the bytes decoded as ISO-8859-1, quoted
// with backslash escapes, or the hex literal x'..' as soon as one character is neither escaped
// nor has a Java numeric value (Character.getNumericValue >= 0: digits, ASCII letters, and the
// superscripts ¹ ² ³ of latin1). Connector/J sends the quoted form in the connection charset
// (UTF-8 here).
func appendLiteral(sb *strings.Builder, b []byte) {
	ok := true
	for _, c := range b {
		switch {
		case c == '\'' || c == '\\' || c == 0 || c == '\b' || c == '\n' || c == '\r' || c == '\t':
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == 0xB2 || c == 0xB3 || c == 0xB9:
		default:
			ok = false
		}
		if !ok {
			break
		}
	}
	if !ok {
		const digits = "0123456789abcdef"
		sb.WriteString("x'")
		for _, c := range b {
			sb.WriteByte(digits[c>>4])
			sb.WriteByte(digits[c&15])
		}
		sb.WriteByte('\'')
		return
	}
	sb.WriteByte('\'')
	for _, c := range b {
		switch c {
		case '\'':
			sb.WriteString(`\'`)
		case '\\':
			sb.WriteString(`\\`)
		case 0:
			sb.WriteString(`\0`)
		case '\b':
			sb.WriteString(`\b`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if c < 0x80 {
				sb.WriteByte(c)
			} else {
				sb.WriteRune(rune(c)) // latin1 → UTF-8
			}
		}
	}
	sb.WriteByte('\'')
}

// jdbcSession applies the session settings Connector/J (with LinkBench's URL) leaves on a
// connection: character_set_results = NULL, and autocommit as LinkStoreMysql sets it.
func jdbcSession(ctx context.Context, conn *sql.Conn, autocommit bool) error {
	ac := "1"
	if !autocommit {
		ac = "0"
	}
	_, err := conn.ExecContext(ctx, "SET character_set_results = NULL, autocommit = "+ac)
	return err
}

// execFirst runs q (possibly several statements) and returns the affected rows of its first
// statement, as Statement.executeUpdate does for "...; commit;".
func execFirst(ctx context.Context, conn *sql.Conn, q string) (int64, error) {
	var n int64
	err := conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("linkbench: driver connection cannot Exec")
		}
		res, err := ex.ExecContext(ctx, q, nil)
		if err != nil {
			return err
		}
		if mr, ok := res.(mysql.Result); ok {
			if all := mr.AllRowsAffected(); len(all) > 0 {
				n = all[0]
				return nil
			}
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// loadJDBC is LinkBench's load as LinkStoreMysql does it: nodes by bulkAddNodes (auto-increment
// ids, "INSERT ...; commit;"), links by addBulkLinks (INSERT ... ON DUPLICATE KEY UPDATE, then
// COMMIT), counts by addBulkCounts (REPLACE, then COMMIT), BatchRows rows per statement.
func loadJDBC(ctx context.Context, db *sql.DB, wl *workload) (*LoadReport, error) {
	cfg := wl.cfg
	rep := &LoadReport{Threads: cfg.LoadThreads, BatchRows: BatchRows}
	t0 := time.Now()
	nowMs := uint64(t0.UnixMilli())
	chunks := (cfg.Nodes + BatchRows - 1) / BatchRows
	chunkIDs := func(c uint64) (uint64, uint64) { return 1 + c*BatchRows, min(cfg.Nodes, (c+1)*BatchRows) }
	q := quoteIdent(cfg.DB)
	type phase struct {
		table, head, tail string
		commitSep         bool // COMMIT as its own statement (else "; commit;" appended)
		rows              func(b *jbatch, rng *rand.Rand, lo, hi uint64) error
	}
	phases := []phase{
		{"nodetable", "INSERT INTO " + q + ".`nodetable` (type, version, time, data) VALUES ", "; commit;", false,
			func(b *jbatch, rng *rand.Rand, lo, hi uint64) error {
				t := uint64(t0.Unix())
				for id := lo; id <= hi; id++ {
					sb := b.next()
					fmt.Fprintf(sb, "(%d,%d,%d,", NodeType, 1, t)
					appendLiteral(sb, randBytes(rng, nodeDataSize.Choose(rng), nodeByteLo, nodeByteHi))
					sb.WriteByte(')')
					if err := b.flushIfFull(); err != nil {
						return err
					}
				}
				return nil
			}},
		{"linktable", "INSERT INTO " + q + ".linktable(id1, id2, link_type, visibility, data, time, version) VALUES ",
			" ON DUPLICATE KEY UPDATE visibility = VALUES(visibility)", true,
			func(b *jbatch, rng *rand.Rand, lo, hi uint64) error {
				for id1 := lo; id1 <= hi; id1++ {
					for lt := uint64(DefaultLinkType); lt < DefaultLinkType+LinkTypeCount; lt++ {
						n := wl.linkCount(id1, lt)
						for k := range n {
							tm := nowMs - 1<<32 + rng.Uint64N(1<<32)
							sb := b.next()
							fmt.Fprintf(sb, "(%d, %d, %d, %d, ", id1, id1+k, lt, visibilityDefault)
							appendLiteral(sb, randBytes(rng, linkDataSize.Choose(rng), linkByteLo, linkByteHi))
							fmt.Fprintf(sb, ", %d, %d)", tm, 0)
							if err := b.flushIfFull(); err != nil {
								return err
							}
						}
					}
				}
				return nil
			}},
		{"counttable", "REPLACE INTO " + q + ".counttable(id, link_type, count, time, version) VALUES ", "", true,
			func(b *jbatch, _ *rand.Rand, lo, hi uint64) error {
				for id1 := lo; id1 <= hi; id1++ {
					for lt := uint64(DefaultLinkType); lt < DefaultLinkType+LinkTypeCount; lt++ {
						if n := wl.linkCount(id1, lt); n > 0 {
							fmt.Fprintf(b.next(), "(%d, %d, %d, %d, %d)", id1, lt, n, nowMs, 0)
							if err := b.flushIfFull(); err != nil {
								return err
							}
						}
					}
				}
				return nil
			}},
	}
	for pi, ph := range phases {
		start := time.Now()
		var rows atomic.Uint64
		err := parallel(ctx, cfg.LoadThreads, chunks, func(ctx context.Context, next func() (uint64, bool)) error {
			conn, err := db.Conn(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			if err := jdbcSession(ctx, conn, false); err != nil {
				return err
			}
			b := &jbatch{ctx: ctx, conn: conn, head: ph.head, tail: ph.tail, commitSep: ph.commitSep, rows: &rows}
			for {
				c, ok := next()
				if !ok {
					return b.flush()
				}
				lo, hi := chunkIDs(c)
				rng := rand.New(rand.NewPCG(cfg.Seed, uint64(pi)<<56|c))
				if err := ph.rows(b, rng, lo, hi); err != nil {
					return err
				}
			}
		})
		if err != nil {
			return rep, fmt.Errorf("linkbench: load %s: %w", ph.table, err)
		}
		rep.addTable(cfg, ph.table, rows.Load(), start)
	}
	rep.Seconds = time.Since(t0).Seconds()
	return rep, nil
}

// jbatch is one multi-row statement of the JDBC load.
type jbatch struct {
	ctx        context.Context
	conn       *sql.Conn
	head, tail string
	commitSep  bool
	sb         strings.Builder
	n          int
	rows       *atomic.Uint64
}

// next starts a row and returns the builder to write its "(...)" into.
func (b *jbatch) next() *strings.Builder {
	if b.n == 0 {
		b.sb.Reset()
		b.sb.WriteString(b.head)
	} else {
		b.sb.WriteByte(',')
	}
	b.n++
	return &b.sb
}

func (b *jbatch) flushIfFull() error {
	if b.n < BatchRows {
		return nil
	}
	return b.flush()
}

func (b *jbatch) flush() error {
	if b.n == 0 {
		return nil
	}
	b.sb.WriteString(b.tail)
	n, err := execFirst(b.ctx, b.conn, b.sb.String())
	if err != nil {
		return err
	}
	if b.commitSep {
		if _, err := b.conn.ExecContext(b.ctx, "commit"); err != nil {
			return err
		}
	}
	if n != int64(b.n) {
		return fmt.Errorf("INSERT of %d rows affected %d", b.n, n)
	}
	b.rows.Add(uint64(b.n))
	b.n = 0
	return nil
}

// connectJDBC opens the requester's two connections: w.conn read-write (autocommit off), w.ro
// read-only (autocommit on).
func (w *worker) connectJDBC(ctx context.Context) error {
	rw, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	w.conn = rw
	ro, err := w.db.Conn(ctx)
	if err != nil {
		w.close()
		return err
	}
	w.ro = ro
	if err := jdbcSession(ctx, rw, false); err != nil {
		w.close()
		return err
	}
	if err := jdbcSession(ctx, ro, true); err != nil {
		w.close()
		return err
	}
	return nil
}

// bodyJDBC is body for the JDBC mode: LinkStoreMysql's statements for each operation.
func (w *worker) bodyJDBC(op Op) func(context.Context) (int64, error) {
	wl, rng := w.wl, w.rng
	db := quoteIdent(wl.cfg.DB)
	linkType := func() uint64 { return DefaultLinkType + rng.Uint64N(LinkTypeCount) }
	switch op {
	case OpAddLink, OpUpdateLink:
		// updateLink is addLink in LinkStoreMysql; only the id2 choice differs.
		id1 := wl.linkWr.Next(rng)
		lt := linkType()
		p := pAddExist
		if op == OpUpdateLink {
			p = pUpdateExist
		}
		id2 := w.chooseID2(id1, lt, p)
		data := randBytes(rng, linkDataSize.Choose(rng), linkByteLo, linkByteHi)
		return func(ctx context.Context) (int64, error) { return w.addLinkJDBC(ctx, db, id1, id2, lt, data) }
	case OpDeleteLink:
		id1 := wl.linkWr.Next(rng)
		lt := linkType()
		id2 := w.chooseID2(id1, lt, pDeleteExist)
		return func(ctx context.Context) (int64, error) { return w.deleteLinkJDBC(ctx, db, id1, id2, lt) }
	case OpCountLink:
		id1 := wl.linkRead.Next(rng)
		lt := linkType()
		q := fmt.Sprintf(" select count from %s.counttable where id = %d and link_type = %d;", db, id1, lt)
		return func(ctx context.Context) (int64, error) { return w.scan(w.ro.QueryContext(ctx, q)) }
	case OpGetLink:
		id1 := wl.linkRead.Next(rng)
		lt := linkType()
		n := multigetDist.Quantile(rng.Float64())
		ids := w.chooseID2s(id1, lt, n)
		sb := &w.sb
		sb.Reset()
		fmt.Fprintf(sb, " select id1, id2, link_type, visibility, data, time,  version from %s.linktable where id1 = %d and link_type = %d and id2 in (", db, id1, lt)
		for i, id := range ids {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatUint(id, 10))
		}
		sb.WriteString(");")
		q := sb.String()
		return func(ctx context.Context) (int64, error) { return w.scan(w.ro.QueryContext(ctx, q)) }
	case OpGetLinkList:
		if len(w.tail) > 0 && rng.Float64() < pHistoryGetLinkList {
			i := rng.IntN(len(w.tail))
			t := w.tail[i]
			return func(ctx context.Context) (int64, error) {
				return w.linkListJDBC(ctx, db, t.id1, t.linkType, t.time, 1, i)
			}
		}
		id1 := wl.linkRead.Next(rng)
		lt := linkType()
		return func(ctx context.Context) (int64, error) {
			return w.linkListJDBC(ctx, db, id1, lt, math.MaxInt64, 0, -1)
		}
	case OpAddNode:
		data := randBytes(rng, nodeDataSize.Choose(rng), nodeByteLo, nodeByteHi)
		return func(ctx context.Context) (int64, error) {
			var sb strings.Builder
			fmt.Fprintf(&sb, "INSERT INTO %s.`nodetable` (type, version, time, data) VALUES (%d,%d,%d,", db, NodeType, 1, time.Now().Unix())
			appendLiteral(&sb, data)
			sb.WriteString("); commit;")
			return execFirst(ctx, w.conn, sb.String())
		}
	case OpUpdateNode:
		id := wl.nodeUpd.Next(rng)
		data := randBytes(rng, nodeDataSize.Choose(rng), nodeByteLo, nodeByteHi)
		return func(ctx context.Context) (int64, error) {
			var sb strings.Builder
			fmt.Fprintf(&sb, "UPDATE %s.`nodetable` SET version=%d, time=%d, data=", db, 2, time.Now().Unix())
			appendLiteral(&sb, data)
			fmt.Fprintf(&sb, " WHERE id=%d AND type=%d; commit;", id, NodeType)
			return execFirst(ctx, w.conn, sb.String())
		}
	case OpDeleteNode:
		id := wl.nodeDel.Next(rng)
		q := fmt.Sprintf("DELETE FROM %s.`nodetable` WHERE id=%d and type =%d; commit;", db, id, NodeType)
		return func(ctx context.Context) (int64, error) { return execFirst(ctx, w.conn, q) }
	default: // OpGetNode
		id := wl.nodeRead.Next(rng)
		q := fmt.Sprintf("SELECT id, type, version, time, data FROM %s.`nodetable` WHERE id=%d;", db, id)
		return func(ctx context.Context) (int64, error) { return w.scan(w.ro.QueryContext(ctx, q)) }
	}
}

// chooseID2s picks n distinct id2s for a multiget (ID2Chooser.chooseMultipleForOp).
func (w *worker) chooseID2s(id1, linkType uint64, n int) []uint64 {
	ids := make([]uint64, 0, n)
	seen := make(map[uint64]bool, n)
	for iter := 0; len(ids) < n && iter < maxUniqIters; iter++ {
		id2 := w.chooseID2(id1, linkType, pGetExist)
		if !seen[id2] {
			seen[id2] = true
			ids = append(ids, id2)
		}
	}
	return ids
}

// addLinkJDBC is LinkStoreMysql.addLinkImpl: insert the link visible (or make it visible), then
// count it and/or rewrite its data; the last statement carries "commit;".
func (w *worker) addLinkJDBC(ctx context.Context, db string, id1, id2, lt uint64, data []byte) (int64, error) {
	now := uint64(time.Now().UnixMilli())
	var sb strings.Builder
	fmt.Fprintf(&sb, "INSERT INTO %s.linktable(id1, id2, link_type, visibility, data, time, version) VALUES (%d, %d, %d, %d, ", db, id1, id2, lt, visibilityDefault)
	appendLiteral(&sb, data)
	fmt.Fprintf(&sb, ", %d, %d) ON DUPLICATE KEY UPDATE visibility = VALUES(visibility)", now, 0)
	n, err := execFirst(ctx, w.conn, sb.String())
	if err != nil {
		return 0, err
	}
	var updateCount, updateData bool
	switch n {
	case 1:
		updateCount = true
	case 0:
		updateData = true
	case 2:
		updateCount, updateData = true, true
	default:
		return 0, fmt.Errorf("addlink: INSERT ... ON DUPLICATE KEY UPDATE affected %d rows, want 0, 1 or 2", n)
	}
	rows := int64(1)
	if updateCount {
		q := fmt.Sprintf("INSERT INTO %s.counttable(id, link_type, count, time, version) VALUES (%d, %d, 1, %d, 0) "+
			"ON DUPLICATE KEY UPDATE count = count + 1, version = version + 1 , time = %d;", db, id1, lt, now, now)
		if !updateData {
			q += " commit;"
		}
		if _, err := execFirst(ctx, w.conn, q); err != nil {
			return 0, err
		}
		rows++
	}
	if updateData {
		sb.Reset()
		fmt.Fprintf(&sb, "UPDATE %s.linktable SET visibility = %d, data = ", db, visibilityDefault)
		appendLiteral(&sb, data)
		fmt.Fprintf(&sb, ", time = %d, version = %d WHERE id1 = %d AND id2 = %d AND link_type = %d; commit;", now, 0, id1, id2, lt)
		if _, err := execFirst(ctx, w.conn, sb.String()); err != nil {
			return 0, err
		}
	}
	return rows, nil
}

// deleteLinkJDBC is LinkStoreMysql.deleteLinkImpl without expunge: lock the link, hide it if
// visible and decrement its count, then COMMIT.
func (w *worker) deleteLinkJDBC(ctx context.Context, db string, id1, id2, lt uint64) (int64, error) {
	sel := fmt.Sprintf("SELECT visibility FROM %s.linktable WHERE id1 = %d AND id2 = %d AND link_type = %d FOR UPDATE;", db, id1, id2, lt)
	vis, found := -1, false
	rows, err := w.conn.QueryContext(ctx, sel)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		if err := rows.Scan(&vis); err != nil {
			rows.Close()
			return 0, err
		}
		found = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var n int64
	if found && vis != visibilityHidden {
		upd := fmt.Sprintf("UPDATE %s.linktable SET visibility = %d WHERE id1 = %d AND id2 = %d AND link_type = %d;", db, visibilityHidden, id1, id2, lt)
		if _, err := execFirst(ctx, w.conn, upd); err != nil {
			return 0, err
		}
		now := time.Now().UnixMilli()
		cnt := fmt.Sprintf("INSERT INTO %s.counttable (id, link_type, count, time, version) VALUES (%d, %d, 0, %d, 0) "+
			"ON DUPLICATE KEY UPDATE count = IF (count = 0, 0, count - 1), time = %d, version = version + 1;", db, id1, lt, now, now)
		if _, err := execFirst(ctx, w.conn, cnt); err != nil {
			return 0, err
		}
		n = 2
	}
	if _, err := w.conn.ExecContext(ctx, "commit"); err != nil {
		return 0, err
	}
	return n, nil
}

// linkListJDBC is getLinkListImpl on the read-only connection; the tail bookkeeping is linkList's.
func (w *worker) linkListJDBC(ctx context.Context, db string, id1, lt, maxTime uint64, offset, tailIdx int) (int64, error) {
	q := fmt.Sprintf(" select id1, id2, link_type, visibility, data, time, version from %s.linktable FORCE INDEX(`id1_type`) "+
		" where id1 = %d and link_type = %d and time >= %d and time <= %d and visibility = %d order by time desc  limit %d,%d;",
		db, id1, lt, 0, maxTime, visibilityDefault, offset, RangeLimit)
	rows, err := w.ro.QueryContext(ctx, q)
	return w.collectLinkList(rows, err, tailIdx)
}
