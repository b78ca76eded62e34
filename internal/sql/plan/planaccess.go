package plan

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
)

// refsOf returns the FROM levels an expression reads, and false if it contains something whose
// dependencies we cannot see (then it is never used as an index bound).
func refsOf(e expr.Expr, sc *Scope) (uint64, bool) {
	switch x := e.(type) {
	case *expr.Const, *expr.Param:
		return 0, true
	case *expr.Col:
		if x.Idx < len(sc.Cols) {
			return 1 << uint(sc.Cols[x.Idx].level), true
		}
		return 0, false
	case *expr.OuterCol:
		return 0, true
	case *expr.Arith:
		return refs2(sc, x.L, x.R)
	case *expr.Bit:
		return refs2(sc, x.L, x.R)
	case *expr.Neg:
		return refsOf(x.E, sc)
	case *expr.Func:
		return refs2(sc, x.Args...)
	case *expr.Closure:
		return refs2(sc, x.Args...)
	}
	return 0, false
}

func refs2(sc *Scope, es ...expr.Expr) (uint64, bool) {
	var r uint64
	for _, e := range es {
		x, ok := refsOf(e, sc)
		if !ok {
			return 0, false
		}
		r |= x
	}
	return r, true
}

// bound is a usable condition on one column of the level being planned.
type bound struct {
	col  int // scope index
	op   opcode.Op
	vals []expr.Expr // EQ: 1, IN: n, range: 1 (BETWEEN: lo, hi)
	isIn bool
}

// orBound is an OR of ranges on one column: (c BETWEEN 1 AND 5 OR c = 9 OR c > 100).
type orBound struct {
	col    int // scope index
	ranges []exec.OrRange
}

// accessCandidate is one way to read a level's table: an index, the access kind, and the values the
// level's conditions bind it with. Each access kind below fills one in; scoreCandidate scores them
// all by one rule and chooseAccess keeps the best.
type accessCandidate struct {
	ix       *catalog.Index
	kind     exec.AccessKind
	eq       []expr.Expr // values for the leading index columns (accPoint: all of them)
	in       []expr.Expr // accBatch: the IN list on the next column
	lo, hi   expr.Expr   // accRange: bounds on the next column; nil = open
	loIncl   bool
	hiIncl   bool
	ors      []exec.OrRange // accRanges: an OR of ranges on the next column
	tuples   [][]expr.Expr  // accBatch: a row constructor IN list on the first columns (Access.Tuples)
	covering bool           // a secondary index holding every column the query reads
	score    int
}

// The scores of scoreCandidate. Kiln keeps no statistics, so a candidate is scored by the shape of
// its bounds alone: more equality columns first, then how the next column is narrowed.
const (
	// scorePointGet: every column of a unique key is bound by equality: at most one row.
	scorePointGet = 1000
	// scoreUniqueBatch: an IN list on the last column of a unique key, the others bound by
	// equality: one point get per value.
	scoreUniqueBatch = 900
	// scorePerEqColumn: each leading index column bound by equality.
	scorePerEqColumn = 10
	// The next index column narrowed by an IN list (a batch of seeks), an OR of ranges, or one
	// range: each reads fewer rows than the one after it, as far as the shape tells.
	scoreNextIn    = 8
	scoreNextOrs   = 6
	scoreNextRange = 5
	scoreCovering  = 2 // a secondary index that needs no row lookup by primary key
	scoreClustered = 1 // the primary index: rows are read where the index is
)

// scoreOrderLimit is the LIMIT rule of orderedScan: with ORDER BY ... LIMIT, an index that delivers
// the order (its scan stops after LIMIT rows) replaces the best bounded candidate when that
// candidate scores at most scoreOrderLimit: an IN list or OR of ranges on its first column, or one
// equality on a secondary index (a range is kept: orderedScan lets only its own index serve the
// order). A better-bound candidate (two equality columns, or an equality on the primary key) is
// expected to read fewer rows than the ordered scan, even though it must read all of them and sort.
const scoreOrderLimit = 10

// orderedScanBeats is the LIMIT rule (scoreOrderLimit): whether an index that delivers the order
// may replace best.
func orderedScanBeats(best *accessCandidate) bool {
	return best == nil || best.score <= scoreOrderLimit
}

// pickBetter is the one place candidates are compared: the higher score wins, and on a tie the
// one seen first (chooseAccess visits the indexes in definition order, the primary key first).
func pickBetter(best, c *accessCandidate) *accessCandidate {
	if best == nil || c.score > best.score {
		return c
	}
	return best
}

// scoreCandidate is the one place candidates are scored (pickBetter compares the scores).
func scoreCandidate(c *accessCandidate) int {
	n := len(c.eq)
	s := 0
	switch c.kind {
	case exec.AccPoint:
		s = scorePointGet
	case exec.AccBatch:
		if len(c.tuples) > 0 {
			n = len(c.tuples[0]) - 1 // the tuple's columns but the last count as an equal prefix
		}
		s = scorePerEqColumn*n + scoreNextIn
		if (c.ix.Primary || c.ix.Unique) && n == len(c.ix.Offsets)-1 {
			s = scoreUniqueBatch
		}
	case exec.AccRanges:
		s = scorePerEqColumn*n + scoreNextOrs
	default:
		s = scorePerEqColumn * n
		if c.lo != nil || c.hi != nil {
			s += scoreNextRange
		}
	}
	if s > 0 {
		if c.ix.Primary {
			s += scoreClustered
		} else if c.covering {
			s += scoreCovering
		}
	}
	return s
}

// accessChooser is what chooseAccess knows about one level while it builds candidates.
type accessChooser struct {
	pl      *exec.Select
	li      int
	lv      *exec.Level
	conds   []*conjunct // the conditions placed at the level
	sc      *Scope
	tbl     *catalog.Table
	before  uint64                  // levels whose values are known when this one opens
	bounds  []bound                 // single-column conditions usable as index bounds
	tuples  []*expr.RowCmp          // row constructor IN lists (and =) on this level's columns
	ors     []orBound               // ORs of ranges on one column
	allowed map[*catalog.Index]bool // what the index hints leave
	forced  bool                    // FORCE INDEX: an unbounded secondary index is read rather than the table
}

// chooseAccess picks the access path of level li from its conditions, index hints and ORDER BY:
//  1. Collect the level's conditions that can bound an index (collectBounds, collectOrBounds).
//  2. Apply the index hints (indexHints).
//  3. Build one candidate per allowed index, of the best kind its bounds allow (indexCandidate:
//     point get, batch point get, range scan, multi-range scan; covering or not), score each
//     (scoreCandidate) and keep the best (pickBetter).
//  4. Let ORDER BY (and LIMIT) pick an index that delivers the order (orderedScan).
//  5. No candidate: a full scan of the primary index (fullScan).
func (p *Planner) chooseAccess(pl *exec.Select, li int, sc *Scope, lp *levelPlan) {
	lv := pl.Levels[li]
	ch := accessChooser{pl: pl, li: li, lv: lv, conds: lp.conds, sc: sc, tbl: lv.Acc.Tbl, before: uint64(1)<<uint(li) - 1,
		allowed: map[*catalog.Index]bool{}}
	ch.bounds = ch.collectBounds()
	var orsBuf [1]orBound // the usual case, on the stack
	ch.ors = ch.collectOrBounds(orsBuf[:0])
	ch.tuples = ch.collectTuples()
	ch.forced = indexHints(ch.allowed, ch.tbl, lp.hints)
	var best *accessCandidate
	for _, ix := range ch.tbl.Indexes {
		if !ch.allowed[ix] {
			continue
		}
		if c := ch.indexCandidate(ix); c != nil {
			best = pickBetter(best, c)
		}
		for _, rc := range ch.tuples {
			if c := ch.tupleCandidate(ix, rc); c != nil {
				best = pickBetter(best, c)
			}
		}
	}
	best = ch.orderedScan(best)
	if best == nil {
		fullScan(lv.Acc)
		return
	}
	useCandidate(lv.Acc, best)
}

// useCandidate makes c the access path of a.
func useCandidate(a *exec.Access, c *accessCandidate) {
	a.Idx, a.Kind, a.Eq, a.In, a.Lo, a.Hi, a.LoIncl, a.HiIncl, a.Covering = c.ix, c.kind, c.eq, c.in, c.lo, c.hi, c.loIncl, c.hiIncl, c.covering
	a.Ors, a.Tuples = c.ors, c.tuples
	if c.ix.Primary {
		a.Covering = false
	}
}

// fullScan reads the whole table in primary key order: what is left when no index helps.
func fullScan(a *exec.Access) {
	a.Kind, a.Idx = exec.AccFull, a.Tbl.Indexes[0]
	a.Hint = "full scan"
}

// onThis returns the scope index of e if it is a column of the level being planned.
func (ch *accessChooser) onThis(e expr.Expr) (int, bool) {
	ce, ok := e.(*expr.Col)
	if !ok || ce.Idx < ch.lv.Off || ce.Idx >= ch.lv.Off+ch.lv.Width {
		return 0, false
	}
	return ce.Idx, true
}

// usable reports whether values are known when the level opens: they read only earlier levels.
func (ch *accessChooser) usable(es ...expr.Expr) bool {
	r, ok := refs2(ch.sc, es...)
	return ok && r&^ch.before == 0
}

// rangeOK reports whether a column's index may serve a range. ENUM and SET keys are ordered by
// member index / bitmask while comparisons with strings compare names: only equality may use their
// index.
func (ch *accessChooser) rangeOK(ci int) bool {
	tp := ch.sc.Cols[ci].T.Tp
	return tp != mysql.TypeEnum && tp != mysql.TypeSet
}

// collectBounds finds the level's conditions that bound one of its columns: =, <, <=, >, >=,
// IN and BETWEEN against values known when the level opens. Like every accessChooser method but
// chooseAccess it only reads ch: a method storing into it would move ch's maps to the heap.
func (ch *accessChooser) collectBounds() []bound {
	var bounds []bound
	for _, cj := range ch.conds {
		switch x := cj.e.(type) {
		case *expr.Cmp:
			if x.Op == opcode.NE || x.Op == opcode.NullEQ {
				continue
			}
			if ci, ok := ch.onThis(x.L); ok && ch.usable(x.R) && (x.Op == opcode.EQ || ch.rangeOK(ci)) {
				bounds = append(bounds, bound{col: ci, op: x.Op, vals: []expr.Expr{x.R}})
			} else if ci, ok := ch.onThis(x.R); ok && ch.usable(x.L) && (x.Op == opcode.EQ || ch.rangeOK(ci)) {
				bounds = append(bounds, bound{col: ci, op: flipOp(x.Op), vals: []expr.Expr{x.L}})
			}
		case *expr.In:
			if x.Not {
				continue
			}
			if ci, ok := ch.onThis(x.E); ok && ch.usable(x.List...) {
				bounds = append(bounds, bound{col: ci, op: opcode.In, vals: x.List, isIn: true})
			}
		case *expr.Between:
			if x.Not {
				continue
			}
			if ci, ok := ch.onThis(x.E); ok && ch.usable(x.Lo, x.Hi) && ch.rangeOK(ci) {
				bounds = append(bounds, bound{col: ci, op: opcode.GE, vals: []expr.Expr{x.Lo}})
				bounds = append(bounds, bound{col: ci, op: opcode.LE, vals: []expr.Expr{x.Hi}})
			}
		}
	}
	return bounds
}

// collectOrBounds appends to ors the level's conditions that are an OR of ranges on one column.
func (ch *accessChooser) collectOrBounds(ors []orBound) []orBound {
	for _, cj := range ch.conds {
		if l, ok := cj.e.(*expr.Logic); ok && l.Op == opcode.LogicOr {
			if ci, rs, ok := ch.leafRanges(l); ok {
				ors = append(ors, orBound{col: ci, ranges: rs})
			}
		}
	}
	return ors
}

// leafRanges turns an OR tree whose leaves all bound the same column into its ranges.
func (ch *accessChooser) leafRanges(e expr.Expr) (int, []exec.OrRange, bool) {
	switch x := e.(type) {
	case *expr.Logic:
		if x.Op != opcode.LogicOr {
			return 0, nil, false
		}
		c1, r1, ok1 := ch.leafRanges(x.L)
		c2, r2, ok2 := ch.leafRanges(x.R)
		if !ok1 || !ok2 || c1 != c2 {
			return 0, nil, false
		}
		return c1, append(r1, r2...), true
	case *expr.Cmp:
		ci, ok := ch.onThis(x.L)
		other, op := x.R, x.Op
		if !ok {
			if ci, ok = ch.onThis(x.R); !ok {
				return 0, nil, false
			}
			other, op = x.L, flipOp(x.Op)
		}
		if !ch.usable(other) || (op != opcode.EQ && !ch.rangeOK(ci)) {
			return 0, nil, false
		}
		switch op {
		case opcode.EQ:
			return ci, []exec.OrRange{{Lo: other, Hi: other, LoIncl: true, HiIncl: true}}, true
		case opcode.LT, opcode.LE:
			return ci, []exec.OrRange{{Hi: other, HiIncl: op == opcode.LE}}, true
		case opcode.GT, opcode.GE:
			return ci, []exec.OrRange{{Lo: other, LoIncl: op == opcode.GE}}, true
		}
	case *expr.Between:
		if ci, ok := ch.onThis(x.E); ok && !x.Not && ch.usable(x.Lo, x.Hi) {
			return ci, []exec.OrRange{{Lo: x.Lo, Hi: x.Hi, LoIncl: true, HiIncl: true}}, true
		}
	case *expr.In:
		if ci, ok := ch.onThis(x.E); ok && !x.Not && ch.usable(x.List...) {
			var rs []exec.OrRange
			for _, v := range x.List {
				rs = append(rs, exec.OrRange{Lo: v, Hi: v, LoIncl: true, HiIncl: true})
			}
			return ci, rs, true
		}
	}
	return 0, nil, false
}

// indexHints applies USE / FORCE / IGNORE INDEX to allowed (which starts as every index of tbl):
// USE and FORCE with names keep only the named indexes, IGNORE removes its names. It reports
// whether FORCE INDEX was given.
func indexHints(allowed map[*catalog.Index]bool, tbl *catalog.Table, hints []*ast.IndexHint) (forced bool) {
	for _, ix := range tbl.Indexes {
		allowed[ix] = true
	}
	for _, h := range hints {
		names := map[string]bool{}
		for _, n := range h.IndexNames {
			names[strings.ToLower(n.O)] = true
		}
		switch h.HintType {
		case ast.HintUse, ast.HintForce:
			if len(names) == 0 {
				continue
			}
			for ix := range allowed {
				if !names[strings.ToLower(ix.Name)] {
					delete(allowed, ix)
				}
			}
			if h.HintType == ast.HintForce {
				forced = true
			}
		case ast.HintIgnore:
			for ix := range allowed {
				if names[strings.ToLower(ix.Name)] {
					delete(allowed, ix)
				}
			}
		}
	}
	return forced
}

// indexCandidate builds the candidate of one index: equality on its leading columns, then the
// best kind of access the bounds allow, scored. It returns nil when the index does not help.
func (ch *accessChooser) indexCandidate(ix *catalog.Index) *accessCandidate {
	c := &accessCandidate{ix: ix, kind: exec.AccRange}
	ch.eqPrefix(c)
	if n := len(c.eq); n == len(ix.Offsets) {
		ch.pointGet(c)
	} else if next := ix.Offsets[n]; !ch.batchPointGet(c, next) && !ch.rangeScan(c, next) {
		ch.multiRangeScan(c, next)
	}
	if !ix.Primary {
		c.covering = ch.covers(ix)
	}
	c.score = scoreCandidate(c)
	// An unbound candidate scans the whole index: for the primary index that is the full scan,
	// and for a secondary one a full scan plus a lookup per row, unless FORCE INDEX asks for it.
	if c.score == 0 && !(ch.forced && !ix.Primary) {
		return nil
	}
	return c
}

// collectTuples finds the level's row constructor comparisons `(a, b) IN ((1, 2), ...)` and
// `(a, b) = (1, 2)` whose left side is columns of the level and whose values are known when it
// opens. MySQL reads them as ranges over an index on those columns (go-tpc's New-Order locks its
// stock rows by `(s_w_id, s_i_id) IN (...) FOR UPDATE`: a full scan locked the whole table).
func (ch *accessChooser) collectTuples() []*expr.RowCmp {
	var out []*expr.RowCmp
	for _, cj := range ch.conds {
		rc, ok := cj.e.(*expr.RowCmp)
		if !ok || rc.Not || len(rc.Rs) == 0 {
			continue
		}
		ok = true
		for _, l := range rc.L {
			if _, own := ch.onThis(l); !own {
				ok = false
			}
		}
		for _, r := range rc.Rs {
			ok = ok && len(r) == len(rc.L) && ch.usable(r...)
		}
		if ok {
			out = append(out, rc)
		}
	}
	return out
}

// tupleCandidate reads rc through ix when ix's first columns are among rc's columns: a batch of
// keys, each a tuple's values in index order (point reads on a whole unique key, else prefix
// scans).
func (ch *accessChooser) tupleCandidate(ix *catalog.Index, rc *expr.RowCmp) *accessCandidate {
	var pos []int // rc.L position of each leading index column
	for i, colOff := range ix.Offsets {
		if ix.Columns[i].Prefix > 0 {
			break
		}
		p := -1
		for j, l := range rc.L {
			if ci, _ := ch.onThis(l); ci-ch.lv.Off == colOff {
				p = j
				break
			}
		}
		if p < 0 {
			break
		}
		pos = append(pos, p)
	}
	if len(pos) == 0 {
		return nil
	}
	c := &accessCandidate{ix: ix, kind: exec.AccBatch}
	for _, r := range rc.Rs {
		t := make([]expr.Expr, len(pos))
		for i, p := range pos {
			t[i] = r[p]
		}
		c.tuples = append(c.tuples, t)
	}
	if !ix.Primary {
		c.covering = ch.covers(ix)
	}
	c.score = scoreCandidate(c)
	return c
}

// eqPrefix binds the leading index columns that have an equality (or a one-value IN list).
func (ch *accessChooser) eqPrefix(c *accessCandidate) {
	for _, colOff := range c.ix.Offsets {
		var eq *bound
		for bi := range ch.bounds {
			b := &ch.bounds[bi]
			if b.col-ch.lv.Off == colOff && (b.op == opcode.EQ || b.isIn && len(b.vals) == 1) {
				eq = b
				break
			}
		}
		if eq == nil {
			return
		}
		c.eq = append(c.eq, eq.vals[0])
	}
}

// pointGet: every index column is bound by equality. On a unique index that is at most one row;
// on a non-unique one it stays a range scan over the equal prefix.
func (ch *accessChooser) pointGet(c *accessCandidate) {
	if c.ix.Primary || c.ix.Unique {
		c.kind = exec.AccPoint
	}
}

// batchPointGet: an IN list on the column after the equal prefix (the first one given) makes a
// batch of seeks.
func (ch *accessChooser) batchPointGet(c *accessCandidate, colOff int) bool {
	for bi := range ch.bounds {
		if b := &ch.bounds[bi]; b.col-ch.lv.Off == colOff && b.isIn {
			c.kind, c.in = exec.AccBatch, b.vals
			return true
		}
	}
	return false
}

// rangeScan: the first lower and the first upper bound on the column after the equal prefix
// (either may be missing). It reports whether there was one.
func (ch *accessChooser) rangeScan(c *accessCandidate, colOff int) bool {
	for bi := range ch.bounds {
		b := &ch.bounds[bi]
		if b.col-ch.lv.Off != colOff {
			continue
		}
		switch {
		case b.op == opcode.GT || b.op == opcode.GE:
			if c.lo == nil {
				c.lo, c.loIncl = b.vals[0], b.op == opcode.GE
			}
		case b.op == opcode.LT || b.op == opcode.LE:
			if c.hi == nil {
				c.hi, c.hiIncl = b.vals[0], b.op == opcode.LE
			}
		}
	}
	return c.lo != nil || c.hi != nil
}

// multiRangeScan: an OR of ranges on the column after the equal prefix (the first one given), when
// neither an IN list nor a range bounds it.
func (ch *accessChooser) multiRangeScan(c *accessCandidate, colOff int) {
	for _, ob := range ch.ors {
		if ob.col-ch.lv.Off == colOff {
			c.kind, c.ors = exec.AccRanges, ob.ranges
			return
		}
	}
}

// covers reports whether a secondary index (with the primary key columns every entry carries)
// holds every column of the level the query reads: an index-only read, no lookup per row.
func (ch *accessChooser) covers(ix *catalog.Index) bool {
	pk := ch.tbl.Indexes[0]
	for i := ch.lv.Off; i < ch.lv.Off+ch.lv.Width; i++ {
		if co := i - ch.lv.Off; ch.sc.Cols[i].used && !slices.Contains(ix.Offsets, co) && !slices.Contains(pk.Offsets, co) {
			return false
		}
	}
	return true
}

// orderedScan serves ORDER BY by index order: only for the first level and when nothing regroups
// or reorders rows (aggregation, window functions). It keeps best when best's index delivers the
// order; otherwise, with a LIMIT that can stop the scan early, it may pick another index that does
// (orderedScanBeats). When the order is delivered, the sort is dropped and the scan runs in the
// ORDER BY's direction.
func (ch *accessChooser) orderedScan(best *accessCandidate) *accessCandidate {
	pl := ch.pl
	if ch.li != 0 || !pl.SortNeeded || pl.Grouped || pl.Windows != nil {
		return best
	}
	orderCols, desc, ok := orderColumns(pl, ch.lv)
	if !ok {
		return best
	}
	if ch.deliversOrder(best, orderCols) {
		pl.SortNeeded = false
	} else if pl.Limit != nil && orderedScanBeats(best) {
		for _, ix := range ch.tbl.Indexes {
			if !ch.allowed[ix] {
				continue
			}
			// A range on best's index is kept: only that index may then serve the order.
			if best != nil && best.score > 0 && (best.lo != nil || best.hi != nil) && best.ix != ix {
				continue
			}
			c := best
			if best == nil || best.ix != ix {
				c = &accessCandidate{ix: ix, kind: exec.AccRange}
				if !ix.Primary {
					c.covering = ch.covers(ix)
				}
			}
			if ch.deliversOrder(c, orderCols) {
				best = c
				pl.SortNeeded = false
				break
			}
		}
	}
	if !pl.SortNeeded && best != nil {
		ch.lv.Acc.Reverse = desc
	}
	return best
}

// deliversOrder reports whether reading c returns rows in the order of orderCols (table column
// offsets): after its equality columns, the index columns (and, for a non-unique index, the
// primary key columns that end each entry) are the ORDER BY columns, none of them a prefix part.
func (ch *accessChooser) deliversOrder(c *accessCandidate, orderCols []int) bool {
	if c == nil {
		return false
	}
	if c.kind == exec.AccPoint {
		return true
	}
	pk := ch.tbl.Indexes[0]
	withPK := !c.ix.Primary && !c.ix.Unique
	pos := len(c.eq)
	for _, oc := range orderCols {
		if slices.Contains(c.ix.Offsets[:len(c.eq)], oc) {
			continue
		}
		var col int
		var prefix bool
		switch {
		case pos < len(c.ix.Offsets):
			col, prefix = c.ix.Offsets[pos], c.ix.Columns[pos].Prefix > 0
		case withPK && pos < len(c.ix.Offsets)+len(pk.Offsets):
			col, prefix = pk.Offsets[pos-len(c.ix.Offsets)], pk.Columns[pos-len(c.ix.Offsets)].Prefix > 0
		default:
			return false
		}
		// A prefix part (KEY (c(10))) orders by the prefix only.
		if col != oc || prefix {
			return false
		}
		pos++
	}
	return true
}

// orderColumns returns the table columns (offsets in the table) of ORDER BY if they are all plain
// columns of level lv in one direction.
func orderColumns(pl *exec.Select, lv *exec.Level) ([]int, bool, bool) {
	var cols []int
	desc := false
	for i, k := range pl.Order {
		ce, ok := pl.Proj[k.Idx].(*expr.Col)
		if !ok || ce.Idx < lv.Off || ce.Idx >= lv.Off+lv.Width {
			return nil, false, false
		}
		if i == 0 {
			desc = k.Desc
		} else if k.Desc != desc {
			return nil, false, false
		}
		cols = append(cols, ce.Idx-lv.Off)
	}
	return cols, desc, true
}

func flipOp(op opcode.Op) opcode.Op {
	switch op {
	case opcode.LT:
		return opcode.GT
	case opcode.LE:
		return opcode.GE
	case opcode.GT:
		return opcode.LT
	case opcode.GE:
		return opcode.LE
	}
	return op
}
