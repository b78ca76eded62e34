package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// refsOf returns the FROM levels an expression reads, and false if it contains something whose
// dependencies we cannot see (then it is never used as an index bound).
func refsOf(e Expr, sc *scope) (uint64, bool) {
	switch x := e.(type) {
	case *constExpr, *paramExpr:
		return 0, true
	case *colExpr:
		if x.idx < len(sc.cols) {
			return 1 << uint(sc.cols[x.idx].level), true
		}
		return 0, false
	case *outerColExpr:
		return 0, true
	case *arithExpr:
		return refs2(sc, x.l, x.r)
	case *bitExpr:
		return refs2(sc, x.l, x.r)
	case *negExpr:
		return refsOf(x.e, sc)
	case *funcExpr:
		return refs2(sc, x.args...)
	case *closureExpr:
		return refs2(sc, x.args...)
	}
	return 0, false
}

func refs2(sc *scope, es ...Expr) (uint64, bool) {
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
	vals []Expr // EQ: 1, IN: n, range: 1 (BETWEEN: lo, hi)
	isIn bool
}

// chooseAccess picks the access path of level li from its conditions, index hints and ORDER BY.
func (p *planner) chooseAccess(pl *selectPlan, li int, sc *scope) {
	lv := pl.levels[li]
	a := lv.acc
	tbl := a.tbl
	before := uint64(1)<<uint(li) - 1 // levels whose values are known when this one opens
	var bounds []bound
	onThis := func(e Expr) (int, bool) {
		ce, ok := e.(*colExpr)
		if !ok || ce.idx < lv.off || ce.idx >= lv.off+lv.width {
			return 0, false
		}
		return ce.idx, true
	}
	usable := func(es ...Expr) bool {
		r, ok := refs2(sc, es...)
		return ok && r&^before == 0
	}
	// ENUM and SET keys are ordered by member index / bitmask while comparisons with strings
	// compare names: only equality may use their index.
	rangeOK := func(ci int) bool {
		tp := sc.cols[ci].t.Tp
		return tp != mysql.TypeEnum && tp != mysql.TypeSet
	}
	for _, cj := range lv.conds {
		switch x := cj.e.(type) {
		case *cmpExpr:
			if x.op == opcode.NE || x.op == opcode.NullEQ {
				continue
			}
			if ci, ok := onThis(x.l); ok && usable(x.r) && (x.op == opcode.EQ || rangeOK(ci)) {
				bounds = append(bounds, bound{col: ci, op: x.op, vals: []Expr{x.r}})
			} else if ci, ok := onThis(x.r); ok && usable(x.l) && (x.op == opcode.EQ || rangeOK(ci)) {
				bounds = append(bounds, bound{col: ci, op: flipOp(x.op), vals: []Expr{x.l}})
			}
		case *inExpr:
			if x.not {
				continue
			}
			if ci, ok := onThis(x.e); ok && usable(x.list...) {
				bounds = append(bounds, bound{col: ci, op: opcode.In, vals: x.list, isIn: true})
			}
		case *betweenExpr:
			if x.not {
				continue
			}
			if ci, ok := onThis(x.e); ok && usable(x.lo, x.hi) && rangeOK(ci) {
				bounds = append(bounds, bound{col: ci, op: opcode.GE, vals: []Expr{x.lo}})
				bounds = append(bounds, bound{col: ci, op: opcode.LE, vals: []Expr{x.hi}})
			}
		}
	}

	// OR of ranges on one column: (c BETWEEN 1 AND 5 OR c = 9 OR c > 100).
	type orBound struct {
		col    int
		ranges []orRange
	}
	var ors []orBound
	var leafRanges func(e Expr) (int, []orRange, bool)
	leafRanges = func(e Expr) (int, []orRange, bool) {
		switch x := e.(type) {
		case *logicExpr:
			if x.op != opcode.LogicOr {
				return 0, nil, false
			}
			c1, r1, ok1 := leafRanges(x.l)
			c2, r2, ok2 := leafRanges(x.r)
			if !ok1 || !ok2 || c1 != c2 {
				return 0, nil, false
			}
			return c1, append(r1, r2...), true
		case *cmpExpr:
			ci, ok := onThis(x.l)
			other, op := x.r, x.op
			if !ok {
				if ci, ok = onThis(x.r); !ok {
					return 0, nil, false
				}
				other, op = x.l, flipOp(x.op)
			}
			if !usable(other) || (op != opcode.EQ && !rangeOK(ci)) {
				return 0, nil, false
			}
			switch op {
			case opcode.EQ:
				return ci, []orRange{{lo: other, hi: other, loIncl: true, hiIncl: true}}, true
			case opcode.LT, opcode.LE:
				return ci, []orRange{{hi: other, hiIncl: op == opcode.LE}}, true
			case opcode.GT, opcode.GE:
				return ci, []orRange{{lo: other, loIncl: op == opcode.GE}}, true
			}
		case *betweenExpr:
			if ci, ok := onThis(x.e); ok && !x.not && usable(x.lo, x.hi) {
				return ci, []orRange{{lo: x.lo, hi: x.hi, loIncl: true, hiIncl: true}}, true
			}
		case *inExpr:
			if ci, ok := onThis(x.e); ok && !x.not && usable(x.list...) {
				var rs []orRange
				for _, v := range x.list {
					rs = append(rs, orRange{lo: v, hi: v, loIncl: true, hiIncl: true})
				}
				return ci, rs, true
			}
		}
		return 0, nil, false
	}
	for _, cj := range lv.conds {
		if l, ok := cj.e.(*logicExpr); ok && l.op == opcode.LogicOr {
			if ci, rs, ok := leafRanges(l); ok {
				ors = append(ors, orBound{col: ci, ranges: rs})
			}
		}
	}

	// Index hints.
	allowed := map[*Index]bool{}
	forced := false
	for _, ix := range tbl.Indexes {
		allowed[ix] = true
	}
	if hints := lv.hints; len(hints) > 0 {
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
	}

	type cand struct {
		ix       *Index
		kind     accessKind
		eq       []Expr
		in       []Expr
		lo, hi   Expr
		loIncl   bool
		hiIncl   bool
		score    int
		covering bool
		ors      []orRange
	}
	used := map[int]bool{}
	for i := lv.off; i < lv.off+lv.width; i++ {
		if sc.cols[i].used {
			used[i-lv.off] = true
		}
	}
	var best *cand
	for _, ix := range tbl.Indexes {
		if !allowed[ix] {
			continue
		}
		c := &cand{ix: ix, kind: accRange}
		n := 0
		for _, colOff := range ix.cols {
			var eq *bound
			for bi := range bounds {
				b := &bounds[bi]
				if b.col-lv.off == colOff && (b.op == opcode.EQ || b.isIn && len(b.vals) == 1) {
					eq = b
					break
				}
			}
			if eq == nil {
				break
			}
			c.eq = append(c.eq, eq.vals[0])
			n++
		}
		unique := ix.Primary || ix.Unique
		if n == len(ix.cols) && unique {
			c.kind = accPoint
			c.score = 1000
		} else if n < len(ix.cols) {
			colOff := ix.cols[n]
			for bi := range bounds {
				b := &bounds[bi]
				if b.col-lv.off != colOff {
					continue
				}
				switch {
				case b.isIn && c.kind != accBatch:
					c.kind, c.in = accBatch, b.vals
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
			if c.kind != accBatch && c.lo == nil && c.hi == nil {
				for _, ob := range ors {
					if ob.col-lv.off == colOff {
						c.kind, c.ors = accRanges, ob.ranges
						break
					}
				}
			}
			switch {
			case c.kind == accRanges:
				c.score = 10*n + 6
			case c.kind == accBatch:
				c.lo, c.hi = nil, nil
				c.score = 10*n + 8
				if unique && n == len(ix.cols)-1 {
					c.score = 900
				}
			default:
				c.score = 10 * n
				if c.lo != nil || c.hi != nil {
					c.score += 5
				}
			}
		} else {
			c.score = 10 * n
		}
		if !ix.Primary {
			c.covering = true
			inIdx := map[int]bool{}
			for _, co := range ix.cols {
				inIdx[co] = true
			}
			for _, co := range tbl.Indexes[0].cols {
				inIdx[co] = true
			}
			for co := range used {
				if !inIdx[co] {
					c.covering = false
				}
			}
			if c.score == 0 && !c.covering && !forced {
				continue // a full index scan plus lookups is worse than a table scan
			}
			if c.covering && c.score > 0 {
				c.score += 2
			}
		} else if c.score > 0 {
			c.score++
		}
		if c.score == 0 && !(forced && !ix.Primary) {
			continue
		}
		if best == nil || c.score > best.score {
			best = c
		}
	}

	// ORDER BY served by index order: only for the first level and when nothing regroups rows.
	if li == 0 && pl.sortNeeded && !pl.grouped {
		orderCols, desc, ok := orderColumns(pl, lv)
		if ok {
			try := func(c *cand) bool {
				if c == nil {
					return false
				}
				if c.kind == accPoint {
					return true
				}
				eff := append([]int(nil), c.ix.cols...)
				if !c.ix.Primary && !c.ix.Unique {
					eff = append(eff, tbl.Indexes[0].cols...)
				}
				pos := len(c.eq)
				eqCols := map[int]bool{}
				for _, co := range c.ix.cols[:len(c.eq)] {
					eqCols[co] = true
				}
				for _, oc := range orderCols {
					if eqCols[oc] {
						continue
					}
					if pos >= len(eff) || eff[pos] != oc {
						return false
					}
					// A prefix part (KEY (c(10))) orders by the prefix only.
					if pos < len(c.ix.cols) && c.ix.Columns[pos].Prefix > 0 ||
						pos >= len(c.ix.cols) && tbl.Indexes[0].Columns[pos-len(c.ix.cols)].Prefix > 0 {
						return false
					}
					pos++
				}
				return true
			}
			if try(best) {
				pl.sortNeeded = false
			} else if pl.limit != nil {
				// Prefer an index that delivers the order when a LIMIT can stop the scan early.
				for _, ix := range tbl.Indexes {
					if !allowed[ix] {
						continue
					}
					c := &cand{ix: ix, kind: accRange}
					if best != nil && best.score > 10 {
						continue
					}
					if !ix.Primary {
						c.covering = true
						for co := range used {
							found := false
							for _, x := range append(append([]int(nil), ix.cols...), tbl.Indexes[0].cols...) {
								if x == co {
									found = true
								}
							}
							if !found {
								c.covering = false
							}
						}
					}
					if best != nil && best.score > 0 && (best.lo != nil || best.hi != nil) {
						if best.ix != ix {
							continue
						}
					}
					if best != nil && best.ix == ix {
						c = best
					}
					if try(c) {
						best = c
						pl.sortNeeded = false
						break
					}
				}
			}
			if !pl.sortNeeded && best != nil {
				a.reverse = desc
			}
		}
	}
	if best == nil {
		a.kind, a.idx = accFull, tbl.Indexes[0]
		a.hint = "full scan"
		return
	}
	a.idx, a.kind, a.eq, a.in, a.lo, a.hi, a.loIncl, a.hiIncl, a.covering = best.ix, best.kind, best.eq, best.in, best.lo, best.hi, best.loIncl, best.hiIncl, best.covering
	a.ors = best.ors
	if best.ix.Primary {
		a.covering = false
	}
}

// orderColumns returns the table columns (offsets in the table) of ORDER BY if they are all plain
// columns of level lv in one direction.
func orderColumns(pl *selectPlan, lv *level) ([]int, bool, bool) {
	var cols []int
	desc := false
	for i, k := range pl.order {
		ce, ok := pl.proj[k.idx].(*colExpr)
		if !ok || ce.idx < lv.off || ce.idx >= lv.off+lv.width {
			return nil, false, false
		}
		if i == 0 {
			desc = k.desc
		} else if k.desc != desc {
			return nil, false, false
		}
		cols = append(cols, ce.idx-lv.off)
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

// describe renders an access for EXPLAIN.
func (a *access) describe() string {
	var kind string
	switch a.kind {
	case accFull:
		kind = "full scan"
	case accPoint:
		kind = "point get"
	case accBatch:
		kind = "batch point get"
	case accRanges:
		kind = fmt.Sprintf("multi-range scan (%d ranges)", len(a.ors))
	case accRange:
		kind = "range scan"
		if len(a.eq) == 0 && a.lo == nil && a.hi == nil {
			kind = "index full scan"
		}
	}
	s := fmt.Sprintf("%s on %s", kind, a.idx.Name)
	if a.covering {
		s += " (covering)"
	}
	if a.reverse {
		s += " (reverse)"
	}
	if a.lock != 0 {
		s += " (locking)"
	}
	return s
}
