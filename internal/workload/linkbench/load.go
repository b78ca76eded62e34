package linkbench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Schema is LinkBench's MySQL schema (the LinkStoreSql-era layout: no
// id1_type/id2_type columns, primary key (link_type, id1, id2) and the
// covering id1_type index for getlinklist). nodetable.data is MEDIUMTEXT
// and linktable.data VARCHAR(255) where LinkBench declares VARBINARY: the
// workload writes only ASCII letters, so the payload is the same.
var Schema = []string{
	`CREATE TABLE nodetable (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  type INT UNSIGNED NOT NULL,
  version BIGINT UNSIGNED NOT NULL,
  time INT UNSIGNED NOT NULL,
  data MEDIUMTEXT NOT NULL
)`,
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
)`,
	`CREATE TABLE counttable (
  id BIGINT UNSIGNED NOT NULL DEFAULT 0,
  link_type BIGINT UNSIGNED NOT NULL DEFAULT 0,
  count INT UNSIGNED NOT NULL DEFAULT 0,
  time BIGINT UNSIGNED NOT NULL DEFAULT 0,
  version BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (id, link_type)
)`,
}

// TableLoad is the load of one table.
type TableLoad struct {
	Table      string  `json:"table"`
	Rows       uint64  `json:"rows"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_sec"`
}

// LoadReport is the load phase: each table loaded on its own, in turn.
type LoadReport struct {
	Threads      int         `json:"threads"`
	BatchRows    int         `json:"batch_rows"`
	Tables       []TableLoad `json:"tables"`
	Seconds      float64     `json:"seconds"`
	LinksPerNode float64     `json:"links_per_node"`
}

func createSchema(ctx context.Context, cfg *Config) error {
	admin, err := cfg.open("", 1)
	if err != nil {
		return err
	}
	defer admin.Close()
	q := quoteIdent(cfg.DB)
	for _, s := range []string{"DROP DATABASE IF EXISTS " + q, "CREATE DATABASE " + q} {
		if _, err := admin.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("linkbench: %s: %w", s, err)
		}
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE "+q); err != nil {
		return fmt.Errorf("linkbench: USE %s: %w", q, err)
	}
	schema := Schema
	if cfg.JDBC {
		schema = JDBCSchema
	}
	for _, s := range schema {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("linkbench: %s: %w", firstLine(s), err)
		}
	}
	return nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func load(ctx context.Context, db *sql.DB, wl *workload) (*LoadReport, error) {
	cfg := wl.cfg
	rep := &LoadReport{Threads: cfg.LoadThreads, BatchRows: BatchRows}
	t0 := time.Now()
	nowMs := uint64(t0.UnixMilli())
	chunks := (cfg.Nodes + BatchRows - 1) / BatchRows
	chunkIDs := func(c uint64) (uint64, uint64) { return 1 + c*BatchRows, min(cfg.Nodes, (c+1)*BatchRows) }

	phases := []struct {
		table string
		rows  func(b *batch, rng *rand.Rand, lo, hi uint64) error
	}{
		{"nodetable", func(b *batch, rng *rand.Rand, lo, hi uint64) error {
			t := uint64(t0.Unix())
			for id := lo; id <= hi; id++ {
				b.row(id, NodeType, 1, t, randData(rng, nodeDataSize.Choose(rng)))
				if err := b.flushIfFull(); err != nil {
					return err
				}
			}
			return nil
		}},
		{"linktable", func(b *batch, rng *rand.Rand, lo, hi uint64) error {
			for id1 := lo; id1 <= hi; id1++ {
				for lt := uint64(DefaultLinkType); lt < DefaultLinkType+LinkTypeCount; lt++ {
					n := wl.linkCount(id1, lt)
					for k := range n {
						// Up to 2^32 ms (~50 days) back, as LinkBenchLoad.chooseInitialTimestamp.
						tm := nowMs - 1<<32 + rng.Uint64N(1<<32)
						b.row(id1, id1+k, lt, visibilityDefault, randData(rng, linkDataSize.Choose(rng)), tm, 0)
						if err := b.flushIfFull(); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}},
		{"counttable", func(b *batch, _ *rand.Rand, lo, hi uint64) error {
			for id1 := lo; id1 <= hi; id1++ {
				for lt := uint64(DefaultLinkType); lt < DefaultLinkType+LinkTypeCount; lt++ {
					if n := wl.linkCount(id1, lt); n > 0 {
						b.row(id1, lt, n, nowMs, 0)
						if err := b.flushIfFull(); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}},
	}
	heads := map[string]string{
		"nodetable":  "INSERT INTO nodetable (id, type, version, time, data) VALUES ",
		"linktable":  "INSERT INTO linktable (id1, id2, link_type, visibility, data, time, version) VALUES ",
		"counttable": "INSERT INTO counttable (id, link_type, count, time, version) VALUES ",
	}
	for pi, ph := range phases {
		start := time.Now()
		var rows atomic.Uint64
		err := parallel(ctx, cfg.LoadThreads, chunks, func(ctx context.Context, next func() (uint64, bool)) error {
			b := &batch{ctx: ctx, db: db, head: heads[ph.table], rows: &rows}
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

// parallel runs threads workers that take work items 0..items-1 from next;
// the first error stops the others.
func parallel(ctx context.Context, threads int, items uint64, work func(context.Context, func() (uint64, bool)) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var counter atomic.Uint64
	next := func() (uint64, bool) {
		if ctx.Err() != nil {
			return 0, false
		}
		c := counter.Add(1) - 1
		return c, c < items
	}
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := work(ctx, next); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// batch accumulates a multi-row INSERT of up to BatchRows rows as SQL text
// with literal values (as LinkStoreMysql's bulk load does).
type batch struct {
	ctx  context.Context
	db   *sql.DB
	head string
	sb   strings.Builder
	n    int
	rows *atomic.Uint64
}

// row appends one row; values are uint64 or string.
func (b *batch) row(vals ...any) {
	if b.n == 0 {
		b.sb.Reset()
		b.sb.WriteString(b.head)
	} else {
		b.sb.WriteByte(',')
	}
	b.sb.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.sb.WriteByte(',')
		}
		switch v := v.(type) {
		case uint64:
			b.sb.WriteString(strconv.FormatUint(v, 10))
		case int:
			b.sb.WriteString(strconv.Itoa(v))
		case string:
			b.sb.WriteString(quoteString(v))
		default:
			panic(fmt.Sprintf("linkbench: batch value %T", v))
		}
	}
	b.sb.WriteByte(')')
	b.n++
}

func (b *batch) flushIfFull() error {
	if b.n < BatchRows {
		return nil
	}
	return b.flush()
}

func (b *batch) flush() error {
	if b.n == 0 {
		return nil
	}
	res, err := b.db.ExecContext(b.ctx, b.sb.String())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n != int64(b.n) {
		return fmt.Errorf("INSERT of %d rows affected %d", b.n, n)
	}
	b.rows.Add(uint64(b.n))
	b.n = 0
	return nil
}

// quoteString is a MySQL string literal (backslash escapes and doubled quotes).
func quoteString(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 2)
	sb.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			sb.WriteString("''")
		case '\\':
			sb.WriteString(`\\`)
		case 0:
			sb.WriteString(`\0`)
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('\'')
	return sb.String()
}

// randData is n random lowercase letters (LinkBench's load fills link data
// with random letters; its request-phase motif generator only changes how
// well the payload compresses).
func randData(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(26))
	}
	return string(b)
}

// addTable records one table's load (both load modes) and reports its progress.
func (rep *LoadReport) addTable(cfg *Config, table string, rows uint64, start time.Time) {
	secs := time.Since(start).Seconds()
	tl := TableLoad{Table: table, Rows: rows, Seconds: secs, RowsPerSec: float64(rows) / secs}
	rep.Tables = append(rep.Tables, tl)
	cfg.progressf("load: %s %d rows in %.1f s (%.0f rows/s)", tl.Table, tl.Rows, tl.Seconds, tl.RowsPerSec)
	if table == "linktable" {
		rep.LinksPerNode = float64(tl.Rows) / float64(cfg.Nodes)
	}
}
