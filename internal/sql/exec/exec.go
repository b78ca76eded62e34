package exec

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Open starts executing a plan. outer is the enclosing query's current row (correlated subqueries).
func (pl *Select) Open(env *expr.Env) (RowIter, error) { return pl.open(env, false) }

// OpenStreaming is Open for a caller that is done with each row, its strings included, before it
// asks for the next, and keeps none of it: the session sending a result to its client
// (proto.ResultWriter's contract). When nothing in the plan keeps rows either (a one-table read
// without sort, aggregation or window functions), every row is then decoded into the same row
// and string buffer and projected into the same output row: no allocation per row.
func (pl *Select) OpenStreaming(env *expr.Env) (RowIter, error) {
	return pl.open(env, pl.streamable())
}

// streamable reports a plan whose operators keep no row beyond the next call to Next: one base
// table read straight into the combined row (joinIter.direct), then filters, the projection,
// DISTINCT (which keeps keys, not rows) and LIMIT.
func (pl *Select) streamable() bool {
	return pl.Union == nil && pl.Static == nil && !pl.Grouped && pl.Windows == nil && !pl.SortNeeded && pl.directRead()
}

// directRead reports a FROM of one base table read straight into the combined row: one level, an
// access path, not an outer join's inner side, filling the whole row (joinIter.direct).
func (pl *Select) directRead() bool {
	if len(pl.Levels) != 1 {
		return false
	}
	lv := pl.Levels[0]
	return lv.Acc != nil && !lv.Left && lv.Off == 0 && lv.Width == pl.Width
}

// foldsRows reports an aggregation that keeps no input row but a copy of each group's first: one
// base table read straight into the row, and only COUNT, SUM and AVG (without DISTINCT), which
// fold values into numbers. Its input rows can then share one buffer (sysbench's SUM(k) range),
// whoever consumes its output.
func (pl *Select) foldsRows() bool {
	if !pl.Grouped || pl.Union != nil || pl.Static != nil || pl.Windows != nil || !pl.directRead() {
		return false
	}
	for i := range pl.Aggs {
		switch ag := &pl.Aggs[i]; {
		case ag.Distinct, ag.Fn != "count" && ag.Fn != "sum" && ag.Fn != "avg":
			return false
		}
	}
	return true
}

func (pl *Select) open(env *expr.Env, reuse bool) (RowIter, error) {
	if pl.Union != nil {
		return pl.Union.open(env)
	}
	folds := pl.foldsRows()
	// The join and the projection, always opened together, are one allocation.
	its := &openIters{join: joinIter{pl: pl, env: env, reuse: reuse || folds}}
	// Below a projection that copies each row's values out (no grouping, window or union keeps
	// the rows themselves), one row buffer serves every row even when the values are kept (a
	// sort): sysbench's ORDER BY range decoded each of its 100 rows into a fresh slice.
	its.join.valuesOnly = !its.join.reuse && pl.Union == nil && pl.Static == nil && !pl.Grouped && pl.Windows == nil
	var it RowIter = &its.join
	if pl.Static != nil {
		rows, err := pl.Static(env)
		if err != nil {
			return nil, err
		}
		it = &sliceIter{rows: rows}
	}
	if pl.Where != nil {
		it = &filterIter{src: it, env: env, cond: pl.Where}
	}
	if pl.Grouped {
		it = &aggIter{pl: pl, env: env, src: it, copyFirst: folds}
		if pl.Having != nil {
			it = &filterIter{src: it, env: env, cond: pl.Having}
		}
	}
	if pl.Windows != nil {
		it = &windowIter{pl: pl, env: env, src: it}
	}
	its.proj = projIter{src: it, env: env, proj: pl.Proj, reuse: reuse}
	it = &its.proj
	var colls []*types.Collation
	if pl.Distinct || pl.SortNeeded {
		colls = projColls(pl)
	}
	sortDistinct := pl.Distinct && pl.SortNeeded && sortCoversDistinct(pl)
	if pl.Distinct && !sortDistinct {
		it = &distinctIter{src: it, env: env, n: pl.NVisible, seen: map[string]struct{}{}, colls: colls}
	}
	limit, offset := int64(-1), int64(0)
	if pl.Limit != nil {
		v, err := pl.Limit.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		limit = types.ToIntLenient(v)
		if limit < 0 {
			limit = 0
		}
	}
	if pl.Offset != nil {
		v, err := pl.Offset.Eval(env, nil)
		if err != nil {
			return nil, err
		}
		offset = max(types.ToIntLenient(v), 0)
	}
	if pl.SortNeeded {
		si := &sortIter{src: it, env: env, keys: pl.Order, colls: colls, limit: limit, offset: offset}
		if sortDistinct {
			si.distinct = pl.NVisible
		}
		it = si
	}
	if limit >= 0 || offset > 0 {
		it = &limitIter{src: it, limit: limit, offset: offset}
	}
	if len(pl.Proj) > pl.NVisible {
		it = &trimIter{src: it, n: pl.NVisible}
	}
	return it, nil
}

func projColls(pl *Select) []*types.Collation {
	out := make([]*types.Collation, len(pl.Proj))
	for i, e := range pl.Proj {
		t := e.Type()
		if expr.IsStringType(t) && t.Collation != "" {
			out[i], _ = types.LookupCollation(t.Collation)
		}
	}
	return out
}

// openIters are the iterators every plan opens.
type openIters struct {
	join joinIter
	proj projIter
}

// joinIter runs the FROM levels as nested loops and yields combined rows.
type joinIter struct {
	pl      *Select
	env     *expr.Env
	cache   [][][]types.Value // per level: filtered rows of an independent inner level, read once
	nocache []bool
	row     []types.Value
	its     []RowIter
	state   []uint8 // per level: 0 need open, 1 iterating, 2 null row emitted / exhausted
	matched []bool
	depth   int
	started bool
	done    bool
	// direct: one base-table level that fills the whole row. Its access path decodes every row into
	// a slice of its own, so rows are filtered and returned as they are, without the copy into row
	// and back out of it.
	direct bool
	// hashes: per level, the rows of a level materialised once by its Keys (lookupRows).
	hashes []*levelHash
	// matBytes: per level, the memory its last materialised rows were counted for.
	matBytes []int64
	// filters: per level, the filter its current rows are checked against: Filter, or Residual
	// while the level's access reports exact bounds.
	filters []expr.Expr
	// reuse: the consumer keeps no row (Select.OpenStreaming); the first level's access decodes
	// every row into the same buffers (accessIter.reuse).
	reuse bool
	// valuesOnly: the consumer keeps values of the rows (their strings), never a row slice; a
	// direct read decodes every row into the same slice, its strings into an arena kept whole
	// (accessIter.keepStrs).
	valuesOnly bool
	// one holds its, state, matched and filters of a one-level plan (a point select): no allocations.
	one struct {
		its     [1]RowIter
		state   [1]uint8
		matched [1]bool
		filters [1]expr.Expr
	}
}

func (j *joinIter) Next() ([]types.Value, error) {
	pl := j.pl
	n := len(pl.Levels)
	if j.done {
		return nil, nil
	}
	if n == 0 {
		j.done = true
		return []types.Value{}, nil
	}
	if !j.started {
		j.started = true
		j.row = make([]types.Value, pl.Width)
		if n == 1 {
			j.its, j.state, j.matched, j.filters = j.one.its[:], j.one.state[:], j.one.matched[:], j.one.filters[:]
		} else {
			j.its = make([]RowIter, n)
			j.state = make([]uint8, n)
			j.matched = make([]bool, n)
			j.filters = make([]expr.Expr, n)
		}
		j.direct = pl.directRead()
	} else {
		// Resume below the deepest level that produced the last row.
		j.depth = n - 1
	}
	for {
		// Inner levels served from memory (the cache below, derived tables) never reach storage's
		// check: every step of the nested loop counts.
		if err := j.env.CheckKilled(); err != nil {
			return nil, err
		}
		L := j.depth
		lv := pl.Levels[L]
		if j.state[L] == 0 {
			it, err := j.openLevel(lv)
			if err != nil {
				return nil, err
			}
			j.its[L], j.state[L], j.matched[L] = it, 1, false
			j.filters[L] = lv.Filter
			if ai, ok := it.(*accessIter); ok {
				if lv.Implied && ai.exact {
					j.filters[L] = lv.Residual
				}
				ai.reuse = (j.reuse || j.valuesOnly) && j.direct
				ai.keepStrs = ai.reuse && !j.reuse
			}
		}
		var r []types.Value
		if j.state[L] == 1 {
			var err error
			if r, err = j.its[L].Next(); err != nil {
				return nil, err
			}
			if r == nil {
				j.its[L].Close()
				j.its[L] = nil
				if lv.Left && !j.matched[L] {
					j.state[L] = 2
					for i := lv.Off; i < lv.Off+lv.Width; i++ {
						j.row[i] = types.Null
					}
					if out, ok := j.descend(L); ok {
						return out, nil
					}
					continue
				}
				j.state[L] = 0
				if L == 0 {
					j.done = true
					return nil, nil
				}
				j.depth--
				continue
			}
			if j.direct && len(r) == lv.Width {
				if f := j.filters[L]; f != nil {
					v, err := f.Eval(j.env, r)
					if err != nil {
						return nil, err
					}
					if b, null := types.ToBool(v); !b || null {
						j.rejected(L)
						continue
					}
				}
				return r, nil
			}
			copy(j.row[lv.Off:lv.Off+lv.Width], r)
			if f := j.filters[L]; f != nil {
				v, err := f.Eval(j.env, j.row)
				if err != nil {
					return nil, err
				}
				if b, null := types.ToBool(v); !b || null {
					j.rejected(L)
					continue
				}
			}
			j.matched[L] = true
			if out, ok := j.descend(L); ok {
				return out, nil
			}
			continue
		}
		// state 2: the NULL-extended row was emitted; this level is finished.
		j.state[L] = 0
		if L == 0 {
			j.done = true
			return nil, nil
		}
		j.depth--
	}
}

// rejected notes that level L's filter dropped a row. The level's access path then decodes each
// further row on its own (accessIter.perRow): rows from shared chunks are for scans that keep
// (nearly) every row, since one kept row holds its whole chunk alive, beyond what the statement's
// memory quota counts for it. A range whose residual filter re-checks its bounds keeps its chunks.
func (j *joinIter) rejected(L int) {
	ai, ok := j.its[L].(*accessIter)
	if !ok {
		return
	}
	if ai.keepStrs {
		// The kept arena would hold the strings of every row read, rejected or not.
		ai.reuse, ai.keepStrs = false, false
	}
	if !ai.reuse {
		ai.perRow = true
	}
}

// descend moves to the next level, or returns a copy of the row when the last level is placed.
func (j *joinIter) descend(L int) ([]types.Value, bool) {
	if L == len(j.pl.Levels)-1 {
		out := make([]types.Value, len(j.row))
		copy(out, j.row)
		return out, true
	}
	j.depth = L + 1
	j.state[L+1] = 0
	return nil, false
}

// maxJoinCacheRows bounds the rows an independent inner level keeps in memory; past it the level is
// read again for each outer row.
const maxJoinCacheRows = 100000

func (j *joinIter) openLevel(lv *Level) (RowIter, error) {
	if lv.Acc != nil {
		L := j.depth
		if !(lv.Indep || lv.HashScan) || L == 0 {
			return lv.Acc.open(j.env, j.row)
		}
		// An inner level that depends on no earlier level yields the same rows for every outer row:
		// read and filter it once (block nested loop), not once per outer row. One whose access
		// depends on no earlier level but whose conditions do (HashScan) is read and filtered by
		// its own conditions once, and looked up by hash on its Keys (a hash join).
		filter := lv.Filter
		if lv.HashScan {
			filter = lv.Local
		}
		if j.cache == nil {
			j.cache = make([][][]types.Value, len(j.pl.Levels))
			j.nocache = make([]bool, len(j.pl.Levels))
		}
		if j.cache[L] != nil {
			return j.lookupRows(lv, j.cache[L]) // all of them unless HashScan gave Keys
		}
		if j.nocache[L] {
			return lv.Acc.open(j.env, j.row)
		}
		it, err := lv.Acc.open(j.env, j.row)
		if err != nil {
			return nil, err
		}
		defer it.Close()
		tmp := make([]types.Value, j.pl.Width)
		rows := [][]types.Value{}
		for {
			r, err := it.Next()
			if err != nil {
				return nil, err
			}
			if r == nil {
				break
			}
			if err := j.env.CheckKilled(); err != nil {
				return nil, err
			}
			if filter != nil {
				copy(tmp[lv.Off:lv.Off+lv.Width], r)
				v, err := filter.Eval(j.env, tmp)
				if err != nil {
					return nil, err
				}
				if b, null := types.ToBool(v); !b || null {
					it.perRow = true // see rejected
					continue
				}
			}
			rows = append(rows, r)
			if err := j.env.GrowRow(r); err != nil {
				return nil, err
			}
			if len(rows) > maxJoinCacheRows {
				j.nocache[L] = true
				return lv.Acc.open(j.env, j.row)
			}
		}
		j.cache[L] = rows
		return j.lookupRows(lv, rows)
	}
	if (lv.Fn == nil || lv.Fn.Const) && j.depth > 0 {
		return j.constFnRows(lv)
	}
	// The first level, or a table function that reads the earlier levels (lateral): materialized
	// each time the level opens (the latter once per outer row).
	// The level's previous rows are garbage once it is opened again: its memory is given back.
	if j.matBytes == nil {
		j.matBytes = make([]int64, len(j.pl.Levels))
	}
	tr := j.env.Tracker()
	tr.Shrink(j.matBytes[j.depth])
	before := tr.Used()
	var rows [][]types.Value
	var err error
	if lv.Fn != nil {
		rows, err = lv.Fn.Rows(j.env, j.row) // lateral: reads the earlier levels' row
	} else {
		rows, err = Materialize(j.env, lv.Sub)
	}
	if err != nil {
		return nil, err
	}
	j.matBytes[j.depth] = tr.Used() - before
	return &sliceIter{rows: rows}, nil
}

// constFnRows serves an inner level whose rows read no earlier level: a derived table, a view, a
// CTE or a virtual table (none can refer to the FROM items before it: Kiln has no LATERAL derived
// tables), or a table function whose document reads no earlier level. Its rows are computed on
// the first outer row and kept for the others, counted once in the memory tracker, as MySQL
// materializes a derived table once per execution. Materializing again per outer row made
// go-tpc's consistency check (orders joined with a grouped derived table of order_line) run for
// an hour at one warehouse.
func (j *joinIter) constFnRows(lv *Level) (RowIter, error) {
	L := j.depth
	if j.cache == nil {
		j.cache = make([][][]types.Value, len(j.pl.Levels))
		j.nocache = make([]bool, len(j.pl.Levels))
	}
	if j.cache[L] == nil {
		var rows [][]types.Value
		var err error
		if lv.Fn != nil {
			rows, err = lv.Fn.Rows(j.env, j.row)
		} else {
			rows, err = Materialize(j.env, lv.Sub)
		}
		if err != nil {
			return nil, err
		}
		if rows == nil {
			rows = [][]types.Value{}
		}
		j.cache[L] = rows
	}
	return j.lookupRows(lv, j.cache[L])
}

// minHashRows: fewer materialised rows than this are scanned, not hashed.
const minHashRows = 8

// levelHash is a materialised level's rows by the values of its Keys (Level.Keys). m nil: some
// row's value is of a kind the key cannot hash (the level is scanned).
type levelHash struct {
	m   map[string][][]types.Value
	buf []byte
}

// lookupRows serves the rows of an inner level materialised once: those whose Keys equal the
// current outer row's values, found by hash (the level's filter still checks every condition), or
// all of them. A row whose key value is NULL matches no outer row; an outer value that is NULL
// matches no row.
func (j *joinIter) lookupRows(lv *Level, rows [][]types.Value) (RowIter, error) {
	L := j.depth
	if len(lv.Keys) == 0 || len(rows) < minHashRows {
		return &sliceIter{rows: rows}, nil
	}
	if j.hashes == nil {
		j.hashes = make([]*levelHash, len(j.pl.Levels))
	}
	h := j.hashes[L]
	if h == nil {
		h = &levelHash{m: make(map[string][][]types.Value)}
		var size int64
	build:
		for _, r := range rows {
			if err := j.env.CheckKilled(); err != nil {
				return nil, err
			}
			k := h.buf[:0]
			for _, key := range lv.Keys {
				var ok, null bool
				if k, ok, null = appendHashKey(k, r[key.Col], key.Coll); null {
					continue build
				} else if !ok {
					h.m = nil
					break build
				}
			}
			h.buf = k
			b, seen := h.m[string(k)]
			if !seen {
				size += int64(len(k)) + 64
			}
			h.m[string(k)] = append(b, r)
		}
		if h.m != nil {
			size += int64(len(rows)) * 24
			if err := j.env.Tracker().Grow(size); err != nil {
				return nil, err
			}
		}
		j.hashes[L] = h
	}
	if h.m == nil {
		return &sliceIter{rows: rows}, nil
	}
	k := h.buf[:0]
	for _, key := range lv.Keys {
		v, err := key.Probe.Eval(j.env, j.row)
		if err != nil {
			return nil, err
		}
		var ok, null bool
		if k, ok, null = appendHashKey(k, v, key.Coll); null {
			return &sliceIter{}, nil
		} else if !ok {
			return &sliceIter{rows: rows}, nil
		}
	}
	h.buf = k
	return &sliceIter{rows: h.m[string(k)]}, nil
}

// appendHashKey appends v's hash-key form for an equality compared as integers (coll nil) or
// as character strings in coll: equal values, and only they, append equal bytes. ok is false for
// a value of another kind (its equality is not decided by this form); null reports a NULL.
func appendHashKey(buf []byte, v types.Value, coll *types.Collation) (out []byte, ok, null bool) {
	switch {
	case v.K == types.KindNull:
		return buf, false, true
	case coll == nil && (v.K == types.KindInt || v.K == types.KindUint && v.I >= 0):
		// A KindUint up to MaxInt64 is the same number as the KindInt.
		return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(v.I)), true, false
	case coll == nil && v.K == types.KindUint:
		return binary.BigEndian.AppendUint64(append(buf, 'u'), uint64(v.I)), true, false
	case coll != nil && v.K == types.KindString:
		return coll.Key(append(buf, 's'), v.S), true, false
	}
	return buf, false, false
}

func (j *joinIter) Close() {
	for i, it := range j.its {
		if it != nil {
			it.Close()
			j.its[i] = nil
		}
	}
}

// Materialize runs a plan to completion (derived tables, subqueries).
func Materialize(env *expr.Env, pl *Select) ([][]types.Value, error) {
	it, err := pl.Open(env)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var rows [][]types.Value
	for {
		r, err := it.Next()
		if err != nil {
			return nil, err
		}
		if r == nil {
			return rows, nil
		}
		if err := env.CheckKilled(); err != nil {
			return nil, err
		}
		if err := env.GrowRow(r); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
}

type sliceIter struct {
	rows [][]types.Value
	i    int
}

func (s *sliceIter) Next() ([]types.Value, error) {
	if s.i >= len(s.rows) {
		return nil, nil
	}
	r := s.rows[s.i]
	s.i++
	return r, nil
}
func (s *sliceIter) Close() {}

type filterIter struct {
	src  RowIter
	env  *expr.Env
	cond expr.Expr
}

func (f *filterIter) Next() ([]types.Value, error) {
	for {
		r, err := f.src.Next()
		if err != nil || r == nil {
			return nil, err
		}
		// A filter that rejects everything loops here for as long as its source has rows.
		if err := f.env.CheckKilled(); err != nil {
			return nil, err
		}
		v, err := f.cond.Eval(f.env, r)
		if err != nil {
			return nil, err
		}
		if b, null := types.ToBool(v); b && !null {
			return r, nil
		}
	}
}
func (f *filterIter) Close() { f.src.Close() }

type projIter struct {
	src   RowIter
	env   *expr.Env
	proj  []expr.Expr
	rows  rowSlab
	reuse bool          // the consumer keeps no row: every row is projected into one
	one   []types.Value // that row
}

func (p *projIter) Next() ([]types.Value, error) {
	r, err := p.src.Next()
	if err != nil || r == nil {
		return nil, err
	}
	var out []types.Value
	if p.reuse {
		if p.one == nil {
			p.one = make([]types.Value, len(p.proj))
		}
		out = p.one
	} else {
		out = p.rows.get(len(p.proj))
	}
	for i, e := range p.proj {
		if out[i], err = e.Eval(p.env, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
func (p *projIter) Close() { p.src.Close() }

type trimIter struct {
	src RowIter
	n   int
}

func (t *trimIter) Next() ([]types.Value, error) {
	r, err := t.src.Next()
	if err != nil || r == nil {
		return nil, err
	}
	return r[:t.n], nil
}
func (t *trimIter) Close() { t.src.Close() }

type limitIter struct {
	src           RowIter
	limit, offset int64
	n             int64
}

func (l *limitIter) Next() ([]types.Value, error) {
	for l.offset > 0 {
		r, err := l.src.Next()
		if err != nil || r == nil {
			return nil, err
		}
		l.offset--
	}
	if l.limit >= 0 && l.n >= l.limit {
		return nil, nil
	}
	r, err := l.src.Next()
	if err != nil || r == nil {
		return nil, err
	}
	l.n++
	return r, nil
}
func (l *limitIter) Close() { l.src.Close() }

// groupKey appends a key under which equal values (by SQL comparison) collide: numbers of any kind
// by their exact decimal value, strings by their collation key.
func groupKey(buf []byte, v types.Value, coll *types.Collation) []byte {
	switch v.K {
	case types.KindNull:
		return append(buf, 0)
	case types.KindInt, types.KindUint, types.KindDecimal:
		buf = append(buf, 1)
		return append(append(buf, types.ToDecimal(v).String()...), 0)
	case types.KindFloat:
		buf = append(buf, 1)
		if math.Trunc(v.F) == v.F && math.Abs(v.F) < 1e18 {
			return append(append(buf, decimal.NewFromInt(int64(v.F)).String()...), 0)
		}
		return append(append(buf, decimal.NewFromFloat(v.F).String()...), 0)
	case types.KindString:
		buf = append(buf, 2)
		if coll != nil {
			// The key goes straight into buf behind a length placeholder (no temporary key).
			at := len(buf)
			buf = coll.Key(appendLen(buf, 0), v.S)
			n := len(buf) - at - 4
			buf[at], buf[at+1], buf[at+2], buf[at+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
			return buf
		}
		buf = appendLen(buf, len(v.S))
		return append(buf, v.S...)
	case types.KindBytes:
		buf = append(buf, 2)
		buf = appendLen(buf, len(v.S))
		return append(buf, v.S...)
	default:
		buf = append(buf, 3)
		return append(append(buf, types.ToString(v)...), 0)
	}
}

func appendLen(buf []byte, n int) []byte {
	return append(buf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// sortCoversDistinct reports a DISTINCT that the sort after it can do instead (sortIter.distinct):
// the ORDER BY names every selected column and nothing else, so rows equal on the selected
// columns are equal on every sort key and end up next to each other, and the columns are strings,
// whose sort order (by collation key) and DISTINCT's equality (groupKey, by the same collation
// key) agree. Then no DISTINCT map is built and the collation keys are computed once, by the sort
// (sysbench's SELECT DISTINCT c ... ORDER BY c).
func sortCoversDistinct(pl *Select) bool {
	n := pl.NVisible
	if n == 0 || n > 64 || len(pl.Order) == 0 {
		return false
	}
	var named uint64
	for _, k := range pl.Order {
		if k.Idx < 0 || k.Idx >= n {
			return false
		}
		named |= 1 << k.Idx
	}
	if named != 1<<n-1 {
		return false
	}
	for _, e := range pl.Proj[:n] {
		if !expr.IsStringType(e.Type()) {
			return false
		}
	}
	return true
}

type distinctIter struct {
	src   RowIter
	env   *expr.Env
	n     int
	seen  map[string]struct{}
	colls []*types.Collation
	buf   []byte
}

func (d *distinctIter) Next() ([]types.Value, error) {
	for {
		r, err := d.src.Next()
		if err != nil || r == nil {
			return nil, err
		}
		// Duplicates loop here without returning.
		if err := d.env.CheckKilled(); err != nil {
			return nil, err
		}
		d.buf = d.buf[:0]
		for i := 0; i < d.n; i++ {
			d.buf = groupKey(d.buf, r[i], d.colls[i])
		}
		if _, ok := d.seen[string(d.buf)]; ok {
			continue
		}
		if err := d.env.Grow(int64(len(d.buf)) + expr.MapEntryOverhead); err != nil {
			return nil, err
		}
		d.seen[string(d.buf)] = struct{}{}
		return r, nil
	}
}
func (d *distinctIter) Close() { d.src.Close() }

// sortIter sorts its input (stable, NULLs first ascending as MySQL). With a LIMIT it keeps only
// offset+limit rows.
type sortIter struct {
	src           RowIter
	env           *expr.Env
	keys          []SortKey
	colls         []*types.Collation
	limit, offset int64
	rows          [][]types.Value
	i             int
	loaded        bool
	// distinct > 0: keep only the first of the rows equal on their first distinct columns, for a
	// DISTINCT whose columns the sort keys cover (sortCoversDistinct); ties are the sorted rows
	// that compare equal to the row before them.
	distinct int
	ties     []bool
	// pooled holds s.rows' backing array when it came from sortSlices (Close gives it back).
	pooled *[][]types.Value
}

// sortSlices recycles sort buffers (the row slice, the prefixed copy) between statements: an ORDER
// BY over 100 rows grew its row slice eight times, a third of oltp_read_only's allocated bytes with
// the prefix copy, and every allocated byte brings the next collection nearer (collections were in
// that workload's p99). Only the slices are recycled, cleared: the rows they point to belong to
// the statement's consumer.
var sortSlices = sync.Pool{New: func() any { return new([][]types.Value) }}

// maxPooledSort bounds the buffers sortSlices keeps: a sort of millions of rows returns its memory.
const maxPooledSort = 4096

func (s *sortIter) Next() ([]types.Value, error) {
	if !s.loaded {
		s.loaded = true
		if s.rows == nil {
			s.pooled = sortSlices.Get().(*[][]types.Value)
			s.rows = (*s.pooled)[:0]
		}
		for {
			r, err := s.src.Next()
			if err != nil {
				return nil, err
			}
			if r == nil {
				break
			}
			if err := s.env.CheckKilled(); err != nil {
				return nil, err
			}
			if err := s.env.GrowRow(r); err != nil {
				return nil, err
			}
			s.rows = append(s.rows, r)
		}
		if err := s.sortRows(); err != nil {
			return nil, err
		}
		if s.distinct > 0 {
			s.dedupe()
		}
	}
	if s.i >= len(s.rows) {
		return nil, nil
	}
	r := s.rows[s.i]
	s.i++
	return r, nil
}
func (s *sortIter) Close() {
	s.src.Close()
	if p := s.pooled; p != nil {
		s.pooled = nil
		if cap(s.rows) <= maxPooledSort {
			clear(s.rows[:cap(s.rows)])
			*p = s.rows[:0]
			sortSlices.Put(p)
		}
		s.rows = nil
	}
}

// sortRows sorts stably. Strings under a non-binary collation are compared by their collation keys,
// computed once per row rather than once per comparison.
func (s *sortIter) sortRows() error {
	keyed := false
	for _, k := range s.keys {
		if c := s.colls[k.Idx]; c != nil && !c.IsBinary() {
			keyed = true
		}
	}
	colls := s.colls
	if keyed && len(s.rows) >= 8 {
		if bc := s.byteOrderColls(); bc != nil {
			keyed, colls = false, bc
		}
	}
	if !keyed || len(s.rows) < 8 {
		var err error
		if len(s.rows) >= 8 && colls[s.keys[0].Idx] == nil && allStrings(s.rows, s.keys[0].Idx) {
			err = s.sortByPrefix(colls)
		} else {
			// slices.SortStableFunc, not sort.SliceStable: the latter swaps rows through
			// reflection (a typed memmove with write barriers per swap), 20% of an ORDER BY of
			// 100 rows.
			err = s.env.SortCancellable(func() {
				slices.SortStableFunc(s.rows, func(a, b []types.Value) int {
					s.env.SortTick()
					return compareRows(a, b, s.keys, colls)
				})
			})
		}
		if err == nil && s.distinct > 0 {
			s.ties = make([]bool, len(s.rows))
			for i := 1; i < len(s.rows); i++ {
				s.ties[i] = compareRows(s.rows[i-1], s.rows[i], s.keys, colls) == 0
			}
		}
		return err
	}
	type keyedRow struct {
		row  []types.Value
		keys [][]byte
	}
	// All keys live in one arena and all key slices in one flat slice: three allocations per
	// sort instead of two or more per row. Offsets are recorded first and slices taken once the
	// arena has stopped growing.
	nk := len(s.keys)
	krs := make([]keyedRow, len(s.rows))
	flat := make([][]byte, len(s.rows)*nk)
	offs := make([]int, 0, 2*len(flat))
	var arena []byte
	for i, r := range s.rows {
		if err := s.env.CheckKilled(); err != nil {
			return err
		}
		for _, k := range s.keys {
			v := r[k.Idx]
			if c := s.colls[k.Idx]; c != nil && !c.IsBinary() && v.K == types.KindString {
				start := len(arena)
				arena = c.Key(arena, v.S)
				offs = append(offs, start, len(arena))
			} else {
				offs = append(offs, -1, -1) // nil key: compared as values
			}
		}
		if i == 0 && len(arena) > 0 {
			// Size the arena once from the first row's keys (rows of one column tend to be alike).
			arena = slices.Grow(arena, len(arena)*(len(s.rows)-1)+64)
		}
		krs[i].row = r
		krs[i].keys = flat[i*nk : (i+1)*nk : (i+1)*nk]
	}
	for i := range flat {
		if start := offs[2*i]; start >= 0 {
			flat[i] = arena[start:offs[2*i+1]:offs[2*i+1]]
		}
	}
	cmp := func(x, y keyedRow) int {
		for j, k := range s.keys {
			var c int
			if x.keys[j] != nil && y.keys[j] != nil {
				c = bytes.Compare(x.keys[j], y.keys[j])
				if k.Desc {
					c = -c
				}
			} else {
				c = compareRows(x.row, y.row, s.keys[j:j+1], s.colls) // applies desc itself
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	err := s.env.SortCancellable(func() {
		slices.SortStableFunc(krs, func(x, y keyedRow) int {
			s.env.SortTick()
			return cmp(x, y)
		})
	})
	if err != nil {
		return err
	}
	if s.distinct > 0 {
		s.ties = make([]bool, len(krs))
		for i := 1; i < len(krs); i++ {
			s.ties[i] = cmp(krs[i-1], krs[i]) == 0
		}
	}
	for i := range krs {
		s.rows[i] = krs[i].row
	}
	return nil
}

// byteOrderColls returns the sort's collations with nil (bytewise) for each sort column whose
// collation orders every one of its values as their bytes (types.Collation.ByteOrdered: ASCII
// digits, letters of one case, '-'... under utf8mb4_0900_ai_ci), or nil if some column has another
// value. Comparing those columns' strings bytewise then gives exactly the collation's order and
// ties, without computing a key per row (sysbench's ORDER BY c / DISTINCT c); checking the
// values costs a table lookup per byte, a fraction of a key.
func (s *sortIter) byteOrderColls() []*types.Collation {
	out := slices.Clone(s.colls)
	for _, k := range s.keys {
		c := s.colls[k.Idx]
		if c == nil || c.IsBinary() || out[k.Idx] == nil {
			continue // bytewise already, or a column named twice and checked
		}
		for _, r := range s.rows {
			if v := r[k.Idx]; v.K != types.KindNull && (v.K != types.KindString || !c.ByteOrdered(v.S)) {
				return nil
			}
		}
		out[k.Idx] = nil
	}
	return out
}

// allStrings reports whether column i of every row is a string (no NULL, no other kind).
func allStrings(rows [][]types.Value, i int) bool {
	for _, r := range rows {
		if r[i].K != types.KindString {
			return false
		}
	}
	return true
}

// sortByPrefix is the stable sort for a first key whose values are all strings compared as
// bytes: each row carries its first key's first eight bytes as a big-endian integer (zero-padded),
// and rows whose integers differ are ordered by them without touching the rows. Where they
// differ, the strings differ within those bytes, or one is a prefix of the other (its padding is
// 0, below any byte the other has there), so the integers order as the strings do; equal
// integers fall back to comparing the rows. sysbench's ORDER BY c spent a third of its time in
// string comparisons of 100 rows.
func (s *sortIter) sortByPrefix(colls []*types.Collation) error {
	k0 := s.keys[0]
	pp := prefixSlices.Get().(*[]prefixed)
	pr := slices.Grow((*pp)[:0], len(s.rows))[:len(s.rows)]
	for i, r := range s.rows {
		var b [8]byte
		copy(b[:], r[k0.Idx].S)
		pr[i] = prefixed{binary.BigEndian.Uint64(b[:]), r}
	}
	err := s.env.SortCancellable(func() {
		slices.SortStableFunc(pr, func(a, b prefixed) int {
			s.env.SortTick()
			if a.p != b.p {
				if (a.p < b.p) != k0.Desc {
					return -1
				}
				return 1
			}
			return compareRows(a.row, b.row, s.keys, colls)
		})
	})
	for i := range pr {
		s.rows[i] = pr[i].row
	}
	if cap(pr) <= maxPooledSort {
		clear(pr)
		*pp = pr[:0]
		prefixSlices.Put(pp)
	}
	return err
}

// prefixed is a row with its first sort key's first eight bytes (sortByPrefix).
type prefixed struct {
	p   uint64
	row []types.Value
}

// prefixSlices recycles sortByPrefix's prefixed copies (sortSlices says why).
var prefixSlices = sync.Pool{New: func() any { return new([]prefixed) }}

// dedupe drops, from the sorted rows, every row equal to an earlier one on the first s.distinct
// columns, as distinctIter would have before the sort: equal rows form runs of ties (the sort keys
// cover those columns), and within a run of more than one row the rows are told apart by their
// DISTINCT keys (groupKey), so the first of each stays, in input order (the sort is stable).
func (s *sortIter) dedupe() {
	out := s.rows[:0]
	var seen map[string]struct{}
	var buf []byte
	for i := 0; i < len(s.rows); {
		j := i + 1
		for j < len(s.rows) && s.ties[j] {
			j++
		}
		if j == i+1 {
			out = append(out, s.rows[i])
			i = j
			continue
		}
		clear(seen)
		if seen == nil {
			seen = map[string]struct{}{}
		}
		for ; i < j; i++ {
			buf = buf[:0]
			for c := 0; c < s.distinct; c++ {
				buf = groupKey(buf, s.rows[i][c], s.colls[c])
			}
			if _, dup := seen[string(buf)]; dup {
				continue
			}
			seen[string(buf)] = struct{}{}
			out = append(out, s.rows[i])
		}
	}
	clear(s.rows[len(out):]) // the dropped rows' slots: let them go
	s.rows, s.ties = out, nil
}

func compareRows(a, b []types.Value, keys []SortKey, colls []*types.Collation) int {
	for _, k := range keys {
		// By pointer: a Value is 56 bytes, and sorts call this a few times per row.
		x, y := &a[k.Idx], &b[k.Idx]
		var c int
		switch {
		case x.K == types.KindString && y.K == types.KindString && colls[k.Idx] == nil:
			c = strings.Compare(x.S, y.S)
		case x.IsNull() && y.IsNull():
			c = 0
		case x.IsNull():
			c = -1
		case y.IsNull():
			c = 1
		default:
			c = types.Compare(*x, *y, colls[k.Idx])
		}
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// aggIter groups rows and computes aggregates. Each output row is the group's first input row
// followed by the aggregate values, which is what post-aggregation expressions are compiled against.
type aggIter struct {
	pl      *Select
	env     *expr.Env
	src     RowIter
	out     [][]types.Value
	i       int
	loaded  bool
	gcMax   int64         // GROUP_CONCAT's effective maximum length; 0 until first needed
	scratch []types.Value // accumulate's argument values, for aggregates that keep none
	packet  int64         // max_allowed_packet; 0 until first needed
	// copyFirst: the source reuses its row buffer (Select.foldsRows): a group keeps a copy of its
	// first row.
	copyFirst bool
}

type aggState struct {
	count  int64
	sum    types.Value
	sumSet bool // sum holds a value
	// SUM/AVG of integers add into isum while it does not overflow; it is folded into sum (exactly)
	// on overflow and before sum is read, so a sum of ints costs no decimal arithmetic per row.
	isum    int64
	hasIsum bool
	fsum    float64
	fsq     float64
	isFloat bool
	val     types.Value // min/max
	bits    uint64
	parts   [][]types.Value
	seen    map[string]struct{}
	hasVal  bool
	// GROUP_CONCAT's result so far (built as rows arrive when it has no ORDER BY), and whether it
	// was cut at its maximum length; JSON aggregates' text bytes so far.
	text      []byte
	cut       bool
	textBytes int64
}

// aggStateBytes is what one aggregate's state costs in a group.
const aggStateBytes = int64(unsafe.Sizeof(aggState{}))

type group struct {
	first  []types.Value
	states []aggState
}

func (a *aggIter) Next() ([]types.Value, error) {
	if !a.loaded {
		a.loaded = true
		if err := a.load(); err != nil {
			return nil, err
		}
	}
	if a.i >= len(a.out) {
		return nil, nil
	}
	r := a.out[a.i]
	a.i++
	return r, nil
}

func (a *aggIter) load() error {
	pl := a.pl
	groups := map[string]*group{}
	var order []*group
	var key []byte
	colls := make([]*types.Collation, len(pl.GroupBy))
	for i, e := range pl.GroupBy {
		if t := e.Type(); expr.IsStringType(t) {
			colls[i], _ = types.LookupCollation(t.Collation)
		}
	}
	for {
		r, err := a.src.Next()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		if err := a.env.CheckKilled(); err != nil {
			return err
		}
		var g *group
		ok := false
		if len(pl.GroupBy) == 0 && len(order) == 1 {
			// One group: no key to build or look up per row (SELECT SUM(k) FROM t).
			g, ok = order[0], true
		} else {
			key = key[:0]
			for i, e := range pl.GroupBy {
				v, err := e.Eval(a.env, r)
				if err != nil {
					return err
				}
				key = groupKey(key, v, colls[i])
			}
			g, ok = groups[string(key)]
		}
		if !ok {
			if err := a.env.Grow(int64(len(key)) + expr.MapEntryOverhead + expr.RowBytes(r) + int64(len(pl.Aggs))*aggStateBytes); err != nil {
				return err
			}
			first := r
			if a.copyFirst {
				// The source decodes every row into the same buffer (Select.foldsRows).
				first = slices.Clone(r)
				for i := range first {
					first[i].S = strings.Clone(first[i].S)
				}
			}
			g = &group{first: first, states: make([]aggState, len(pl.Aggs))}
			groups[string(key)] = g
			order = append(order, g)
		}
		for i := range pl.Aggs {
			if err := a.accumulate(&pl.Aggs[i], &g.states[i], r); err != nil {
				return err
			}
		}
	}
	if len(order) == 0 && len(pl.GroupBy) == 0 {
		// Aggregates over no rows still return one row (COUNT 0, SUM NULL).
		order = append(order, &group{first: make([]types.Value, pl.Width), states: make([]aggState, len(pl.Aggs))})
	}
	for _, g := range order {
		if err := a.env.CheckKilled(); err != nil {
			return err
		}
		row := make([]types.Value, pl.Width+len(pl.Aggs))
		copy(row, g.first)
		for i := range pl.Aggs {
			row[pl.Width+i] = a.finalize(&pl.Aggs[i], &g.states[i])
		}
		a.out = append(a.out, row)
	}
	return nil
}

func (a *aggIter) accumulate(spec *Agg, st *aggState, r []types.Value) error {
	if spec.Star {
		st.count++
		return nil
	}
	if spec.Fn == "count" && !spec.Distinct {
		// COUNT(a, ...) counts the rows where no argument is NULL; the values are not kept, so
		// they are not copied (a column's is read in place): a COUNT(k) over a range scan is
		// one check per row.
		for _, e := range spec.Args {
			if c, ok := e.(*expr.Col); ok {
				if r[c.Idx].K == types.KindNull {
					return nil
				}
				continue
			}
			v, err := e.Eval(a.env, r)
			if err != nil || v.IsNull() {
				return err
			}
		}
		st.count++
		return nil
	}
	var vals []types.Value
	if spec.Fn == "group_concat" || strings.HasPrefix(spec.Fn, "json_") {
		vals = make([]types.Value, len(spec.Args)) // kept (ORDER BY) or handed on
	} else {
		// The other aggregates fold the values into their state and keep none of the slice.
		if cap(a.scratch) < len(spec.Args) {
			a.scratch = make([]types.Value, len(spec.Args))
		}
		vals = a.scratch[:len(spec.Args)]
	}
	for i, e := range spec.Args {
		v, err := e.Eval(a.env, r)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	nArgs := len(vals) - spec.NOrder
	switch spec.Fn {
	case "json_arrayagg":
		// JSON aggregates keep NULLs (as JSON null).
		st.count++
		return a.jsonPart(spec, st, []types.Value{jsonAggValue(spec.Args[0], vals[0])})
	case "json_objectagg":
		if vals[0].IsNull() {
			return sqlerr.New(sqlerr.ErrJSONNullMemberName, "JSON documents may not contain NULL member names.")
		}
		st.count++
		return a.jsonPart(spec, st, []types.Value{types.NewString(types.ToString(vals[0])), jsonAggValue(spec.Args[1], vals[1])})
	}
	for _, v := range vals[:nArgs] {
		if v.IsNull() {
			return nil // aggregates skip NULLs (COUNT(a, b) counts rows where all are non-NULL)
		}
	}
	if spec.Distinct {
		if dup, err := a.seenBefore(spec, st, vals[:nArgs]); err != nil || dup {
			return err
		}
	}
	st.count++
	return a.fold(spec, st, vals)
}

// seenBefore is DISTINCT inside an aggregate: it reports whether the group already had these
// argument values, and remembers them if not (counted against the statement's memory quota).
func (a *aggIter) seenBefore(spec *Agg, st *aggState, vals []types.Value) (bool, error) {
	if st.seen == nil {
		st.seen = map[string]struct{}{}
	}
	var k []byte
	for i, v := range vals {
		var coll *types.Collation
		if v.K == types.KindString {
			coll, _ = types.LookupCollation(spec.Args[i].Type().Collation)
		}
		k = groupKey(k, v, coll)
	}
	if _, ok := st.seen[string(k)]; ok {
		return true, nil
	}
	if err := a.env.Grow(int64(len(k)) + expr.MapEntryOverhead); err != nil {
		return false, err
	}
	st.seen[string(k)] = struct{}{}
	return false, nil
}

// fold adds one row's non-NULL argument values (already counted in st.count) to the aggregate's
// state.
func (a *aggIter) fold(spec *Agg, st *aggState, vals []types.Value) error {
	v := vals[0]
	switch spec.Fn {
	case "count":
	case "sum", "avg":
		if v.K == types.KindFloat || v.K == types.KindString || v.K == types.KindBytes || st.isFloat {
			flushIntSum(st)
			if !st.isFloat && st.sumSet {
				st.fsum = types.ToFloat(st.sum)
			}
			st.isFloat = true
			st.fsum += types.ToFloat(v)
		} else if v.K == types.KindInt {
			if !st.hasIsum {
				st.isum, st.hasIsum = v.I, true
			} else if x := st.isum + v.I; (x > st.isum) == (v.I > 0) {
				st.isum = x
			} else { // overflow
				flushIntSum(st)
				st.isum, st.hasIsum = v.I, true
			}
		} else {
			flushIntSum(st)
			if !st.sumSet {
				st.sum = types.NewDecimal(types.ToDecimal(v), 0)
			} else {
				st.sum = types.NewDecimal(types.ToDecimal(st.sum).Add(types.ToDecimal(v)), 0)
			}
			st.sumSet = true
		}
		st.hasVal = true
	case "min", "max":
		if !st.hasVal {
			st.val, st.hasVal = v, true
			return nil
		}
		var coll *types.Collation
		if t := spec.Args[0].Type(); expr.IsStringType(t) {
			coll, _ = types.LookupCollation(t.Collation)
		}
		c := types.Compare(v, st.val, coll)
		if spec.Fn == "min" && c < 0 || spec.Fn == "max" && c > 0 {
			st.val = v
		}
	case "group_concat":
		if len(spec.Order) > 0 {
			// The order is known only at the end: keep the rows (counted against the quota).
			if err := a.env.GrowRow(vals); err != nil {
				return err
			}
			st.parts = append(st.parts, vals)
			return nil
		}
		return a.concatPart(spec, st, vals, st.count)
	case "bit_and":
		if !st.hasVal {
			st.bits = ^uint64(0)
		}
		st.bits &= expr.ToUint64(v)
		st.hasVal = true
	case "bit_or":
		st.bits |= expr.ToUint64(v)
	case "bit_xor":
		st.bits ^= expr.ToUint64(v)
	case "std", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp":
		// Welford's recurrence, as MySQL computes variances.
		f := types.ToFloat(v)
		if st.count == 1 {
			st.fsum, st.fsq = f, 0
		} else {
			m := st.fsum
			st.fsum = m + (f-m)/float64(st.count)
			st.fsq += (f - m) * (f - st.fsum)
		}
	default:
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "aggregate %s is not supported", spec.Fn)
	}
	return nil
}

// flushIntSum folds the pending integer sum into sum.
func flushIntSum(st *aggState) {
	if !st.hasIsum {
		return
	}
	d := decimal.NewFromInt(st.isum)
	if st.sumSet {
		d = types.ToDecimal(st.sum).Add(d)
	}
	st.sum, st.sumSet = types.NewDecimal(d, 0), true
	st.isum, st.hasIsum = 0, false
}

func (a *aggIter) finalize(spec *Agg, st *aggState) types.Value {
	flushIntSum(st)
	switch spec.Fn {
	case "count":
		return types.NewInt(st.count)
	case "sum":
		if st.count == 0 {
			return types.Null
		}
		if st.isFloat {
			return types.NewFloat(st.fsum)
		}
		return types.NewDecimal(types.ToDecimal(st.sum), spec.T.Frac)
	case "avg":
		if st.count == 0 {
			return types.Null
		}
		if st.isFloat {
			return types.NewFloat(st.fsum / float64(st.count))
		}
		d := types.ToDecimal(st.sum).DivRound(decimal.NewFromInt(st.count), int32(spec.T.Frac))
		return types.NewDecimal(d, spec.T.Frac)
	case "min", "max":
		if !st.hasVal {
			return types.Null
		}
		return st.val
	case "group_concat":
		return a.finalGroupConcat(spec, st)
	case "json_arrayagg":
		if st.count == 0 || a.jsonTooLarge(spec, st) {
			return types.Null
		}
		arr := make([]any, len(st.parts))
		for i, p := range st.parts {
			arr[i] = jsonAggDoc(p[0])
		}
		return expr.JSONResult(arr)
	case "json_objectagg":
		if st.count == 0 || a.jsonTooLarge(spec, st) {
			return types.Null
		}
		m := map[string]any{}
		for _, p := range st.parts {
			m[p[0].S] = jsonAggDoc(p[1])
		}
		return expr.JSONResult(m)
	case "bit_and":
		if !st.hasVal {
			return types.NewUint(^uint64(0))
		}
		return types.NewUint(st.bits)
	case "bit_or", "bit_xor":
		return types.NewUint(st.bits)
	case "std", "stddev", "stddev_pop", "variance", "var_pop", "stddev_samp", "var_samp":
		return finalVariance(spec, st)
	}
	return types.Null
}

// finalGroupConcat is GROUP_CONCAT's result: the kept rows in their ORDER BY order, or the text
// built as the rows came; never half a character when it was cut at its maximum length.
func (a *aggIter) finalGroupConcat(spec *Agg, st *aggState) types.Value {
	if st.count == 0 {
		return types.Null
	}
	if len(spec.Order) > 0 {
		colls := make([]*types.Collation, len(spec.Args))
		for i, e := range spec.Args {
			if t := e.Type(); expr.IsStringType(t) {
				colls[i], _ = types.LookupCollation(t.Collation)
			}
		}
		sort.SliceStable(st.parts, func(a, b int) bool { return compareRows(st.parts[a], st.parts[b], spec.Order, colls) < 0 })
		for i, p := range st.parts {
			_ = a.concatPart(spec, st, p, int64(i+1)) // counted when the rows were kept
			if st.cut {
				break
			}
		}
		st.parts = nil
	}
	s := string(st.text)
	if st.cut && spec.T.Collation != "binary" {
		// Do not leave half a character.
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	if spec.T.Collation == "binary" {
		return types.NewBytes(s)
	}
	return types.NewString(s)
}

// finalVariance is the result of the standard deviation and variance aggregates (population, or
// sample for STDDEV_SAMP and VAR_SAMP).
func finalVariance(spec *Agg, st *aggState) types.Value {
	if st.count == 0 {
		return types.Null
	}
	variance := st.fsq / float64(st.count)
	if spec.Fn == "stddev_samp" || spec.Fn == "var_samp" {
		if st.count < 2 {
			return types.Null
		}
		variance = st.fsq / float64(st.count-1)
	}
	if strings.HasPrefix(spec.Fn, "var") {
		return types.NewFloat(variance)
	}
	return types.NewFloat(math.Sqrt(variance))
}

func (a *aggIter) Close() { a.src.Close() }

// groupConcatMax is GROUP_CONCAT's effective maximum length: group_concat_max_len, itself bounded
// by max_allowed_packet as MySQL documents.
func (a *aggIter) groupConcatMax() int64 {
	if a.gcMax == 0 {
		a.gcMax = min(types.ToIntLenient(a.env.Sess.SysVar(sysvar.Must("group_concat_max_len"), false)), a.env.MaxAllowedPacket())
	}
	return a.gcMax
}

// concatPart appends row n's values (and the separator) to GROUP_CONCAT's result, stopping at its
// maximum length with warning 1260, so no group holds more than that whatever it aggregates.
func (a *aggIter) concatPart(spec *Agg, st *aggState, vals []types.Value, n int64) error {
	if st.cut {
		return nil
	}
	limit := a.groupConcatMax()
	before := len(st.text)
	if n > 1 {
		st.appendCut(spec.Sep, limit)
	}
	nArgs := len(spec.Args) - spec.NOrder
	for _, v := range vals[:nArgs] {
		if st.cut {
			break
		}
		if v.K == types.KindString || v.K == types.KindBytes {
			st.appendCut(v.S, limit)
		} else {
			st.appendCut(types.ToString(v), limit)
		}
	}
	if st.cut {
		a.env.Warn(sqlerr.New(sqlerr.ErrCutValueGroupConcat, "Row %d was cut by GROUP_CONCAT()", n))
	}
	if len(spec.Order) > 0 {
		return nil // the rows were counted as they were kept
	}
	return a.env.Grow(int64(len(st.text) - before))
}

func (st *aggState) appendCut(s string, limit int64) {
	if room := limit - int64(len(st.text)); int64(len(s)) > room {
		st.text = append(st.text, s[:room]...)
		st.cut = true
		return
	}
	st.text = append(st.text, s...)
}

// jsonPart keeps a JSON aggregate's member; past max_allowed_packet the members are dropped and
// the result is NULL with warning 1301 (jsonTooLarge), so the group stops growing.
func (a *aggIter) jsonPart(spec *Agg, st *aggState, part []types.Value) error {
	if st.cut {
		return nil
	}
	for i := range part {
		st.textBytes += int64(len(part[i].S)) + 1
	}
	if a.packet == 0 {
		a.packet = a.env.MaxAllowedPacket()
	}
	if st.textBytes > a.packet {
		st.cut, st.parts = true, nil
		return nil
	}
	if err := a.env.GrowRow(part); err != nil {
		return err
	}
	st.parts = append(st.parts, part)
	return nil
}

func (a *aggIter) jsonTooLarge(spec *Agg, st *aggState) bool {
	return st.cut && a.env.ResultTooLarge(spec.Fn, st.textBytes)
}

// jsonAggValue turns a JSON aggregate's argument into the JSON text of its document (JSON-typed
// values are embedded, other values become scalars, NULL is null).
func jsonAggValue(e expr.Expr, v types.Value) types.Value {
	return types.NewString(types.JSONText(expr.JSONValueArg(e, v)))
}

func jsonAggDoc(v types.Value) any {
	doc, _ := types.ParseJSON(v.S)
	return doc
}

// Materialize runs the plan to completion: a subquery expression's rows.
func (pl *Select) Materialize(env *expr.Env) ([][]types.Value, error) {
	return Materialize(env, pl)
}
