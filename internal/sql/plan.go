package sql

import (
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// level is one FROM item in nested-loop order. Its rows are placed at row[off:off+width] of the
// combined row.
type level struct {
	acc    *access     // a base table
	sub    *selectPlan // a derived table
	alias  string
	off    int
	width  int
	left   bool // LEFT JOIN: an unmatched outer row gets NULLs here
	filter Expr // conditions checked once this level's row is placed
	conds  []*conjunct
	hints  []*ast.IndexHint
	indep  bool // reads nothing of earlier levels: its filtered rows can be read once per execution
}

// aggSpec is one aggregate function.
type aggSpec struct {
	fn       string
	args     []Expr
	distinct bool
	star     bool
	sep      string
	t        types.ColType
	order    []sortKey // GROUP_CONCAT ... ORDER BY, over args
	nOrder   int       // trailing args that only ORDER BY uses
}

type sortKey struct {
	idx  int
	desc bool
}

// selectPlan is an immutable plan for a SELECT; each execution opens new iterators over it.
type selectPlan struct {
	levels     []*level
	width      int
	where      Expr // post-join filter
	grouped    bool
	groupBy    []Expr
	aggs       []aggSpec
	having     Expr
	proj       []Expr
	nVisible   int
	distinct   bool
	order      []sortKey
	sortNeeded bool
	limit      Expr
	offset     Expr
	cols       []proto.Column
	lock       txn.LockMode
	union      *unionPlan
	correlated bool
	// static produces the rows of a virtual table (information_schema, SHOW).
	static func(env *Env) ([][]types.Value, error)
}

// conjunct is one AND-ed condition with the FROM levels it reads.
type conjunct struct {
	e    Expr
	refs uint64
	node ast.ExprNode
}

// splitAnd flattens a AND b AND c.
func splitAnd(n ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	if n == nil {
		return out
	}
	if p, ok := n.(*ast.ParenthesesExpr); ok {
		return splitAnd(p.Expr, out)
	}
	if b, ok := n.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
		out = splitAnd(b.L, out)
		return splitAnd(b.R, out)
	}
	return append(out, n)
}

type fromItem struct {
	tn    *ast.TableName
	sub   ast.ResultSetNode
	alias string
	left  bool
	on    ast.ExprNode
	using []*ast.ColumnName
}

// flattenFrom turns the join tree into nested-loop order. RIGHT JOIN is rewritten as a LEFT JOIN with
// the sides swapped.
func flattenFrom(n ast.ResultSetNode, out []fromItem) ([]fromItem, error) {
	switch x := n.(type) {
	case *ast.Join:
		if x.Right == nil {
			return flattenFrom(x.Left, out)
		}
		l, r := x.Left, x.Right
		leftJoin := x.Tp == ast.LeftJoin
		if x.Tp == ast.RightJoin {
			l, r = r, l
			leftJoin = true
		}
		var err error
		if out, err = flattenFrom(l, out); err != nil {
			return nil, err
		}
		if _, ok := r.(*ast.Join); ok && leftJoin {
			return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "LEFT JOIN of a nested join is not supported yet")
		}
		start := len(out)
		if out, err = flattenFrom(r, out); err != nil {
			return nil, err
		}
		last := &out[len(out)-1]
		if leftJoin {
			out[start].left = true
		}
		if x.On != nil {
			if last.on != nil {
				last.on = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: last.on, R: x.On.Expr}
			} else {
				last.on = x.On.Expr
			}
		}
		last.using = append(last.using, x.Using...)
		if x.NaturalJoin {
			last.using = append(last.using, &ast.ColumnName{}) // marker: natural join, resolved later
		}
		return out, nil
	case *ast.TableSource:
		switch s := x.Source.(type) {
		case *ast.TableName:
			alias := s.Name.O
			if x.AsName.O != "" {
				alias = x.AsName.O
			}
			return append(out, fromItem{tn: s, alias: alias}), nil
		case *ast.SelectStmt, *ast.SetOprStmt:
			if x.AsName.O == "" {
				return nil, sqlerr.New(sqlerr.ErrDerivedMustHaveAlias, "Every derived table must have its own alias")
			}
			return append(out, fromItem{sub: s, alias: x.AsName.O}), nil
		case *ast.Join:
			return flattenFrom(s, out)
		}
	}
	return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported FROM clause %T", n)
}

// planner builds plans for one statement.
type planner struct {
	s            *Session
	params       *int
	viewDepth    int  // nesting of views being planned (planView)
	selDepth     int  // nesting of query blocks being planned (enterSelect)
	creatingView bool // CREATE VIEW checks its body: errors are reported as they are
}

// planSelect plans a SELECT (or UNION) with an optional enclosing scope for correlated references.
func (p *planner) planResultSet(n ast.ResultSetNode, parent *scope) (*selectPlan, error) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		return p.planSelect(x, parent)
	case *ast.SetOprStmt:
		return p.planUnion(x, parent)
	}
	return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported query %T", n)
}

func (p *planner) newCompiler(sc *scope) *compiler {
	return &compiler{s: p.s, sc: sc, params: p.params, planSub: func(c *compiler, sel ast.ResultSetNode) (*subPlan, error) {
		sp, err := p.planResultSet(sel, c.sc)
		if err != nil {
			return nil, err
		}
		return &subPlan{plan: sp}, nil
	}}
}

func (p *planner) planSelect(sel *ast.SelectStmt, parent *scope) (*selectPlan, error) {
	if err := p.enterSelect(); err != nil {
		return nil, err
	}
	defer func() { p.selDepth-- }()
	return p.planSelectOrdered(sel, parent, nil)
}

// enterSelect counts one more query block being planned inside the current one (subquery, derived
// table, view, UNION member): MySQL allows 63 (nesting.go).
func (p *planner) enterSelect() error {
	if p.selDepth >= maxSelectNesting {
		return errSelectNesting()
	}
	p.selDepth++
	return nil
}

// planSelectOrdered plans with the FROM items in the given nested-loop order (nil: as written; the
// first pass may then choose a better order for inner joins and plan again).
func (p *planner) planSelectOrdered(sel *ast.SelectStmt, parent *scope, order []int) (*selectPlan, error) {
	if sel.Kind == ast.SelectStmtKindValues || sel.Kind == ast.SelectStmtKindTable {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "VALUES/TABLE statements are not supported yet")
	}
	if sel.With != nil {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "WITH (common table expressions) is not supported yet")
	}
	pl := &selectPlan{distinct: sel.Distinct}
	sc := &scope{parent: parent}
	var items []fromItem
	if sel.From != nil {
		var err error
		if items, err = flattenFrom(sel.From.TableRefs, nil); err != nil {
			return nil, err
		}
	}
	if len(items) > 61 {
		return nil, sqlerr.New(sqlerr.ErrTooManyTables, "Too many tables; MySQL can only use 61 tables in a join")
	}
	written := make([]int, len(items)) // level of each item in written order
	for i := range written {
		written[i] = i
	}
	if order != nil {
		reordered := make([]fromItem, len(items))
		for li, oi := range order {
			reordered[li] = items[oi]
			written[oi] = li
		}
		items = reordered
	}
	cat := p.s.catalog()
	for li, it := range items {
		lv := &level{alias: it.alias, off: len(sc.cols), left: it.left}
		if it.tn != nil {
			db := it.tn.Schema.O
			if db == "" {
				db = p.s.CurDB
				if db == "" {
					return nil, sqlerr.New(sqlerr.ErrNoDB, "No database selected")
				}
			}
			if !isVirtualDB(db) {
				if err := p.s.lockDB(db); err != nil {
					return nil, err
				}
				cat = p.s.catalog()
			}
			tbl, ok := cat.Table(db, it.tn.Name.O)
			if !ok {
				if v, ok := cat.View(db, it.tn.Name.O); ok {
					if err := p.s.useTable(v.DB, v.Name, false); err != nil {
						return nil, err
					}
					sub, err := p.planView(v, p.viewDepth)
					if err != nil {
						return nil, err
					}
					lv.setSub(sc, sub, db, it.alias, v.Name, li)
					pl.levels = append(pl.levels, lv)
					continue
				}
				if vt, ok := p.s.virtualTable(db, it.tn.Name.O); ok {
					lv.sub = vt
					lv.width = len(vt.cols)
					for _, c := range vt.cols {
						sc.cols = append(sc.cols, scopeCol{db: db, table: it.alias, orgTable: it.tn.Name.O, name: c.Name, t: colTypeOf(c), level: li})
					}
					pl.levels = append(pl.levels, lv)
					continue
				}
				if _, ok := cat.DB(db); !ok && !isVirtualDB(db) {
					return nil, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, it.tn.Name.O)
				}
				return nil, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, it.tn.Name.O)
			}
			if err := p.s.useTable(tbl.DB, tbl.Name, false); err != nil {
				return nil, err
			}
			for _, other := range pl.levels {
				if strings.EqualFold(other.alias, it.alias) {
					return nil, sqlerr.New(sqlerr.ErrNonUniqTable, "Not unique table/alias: '%s'", it.alias)
				}
			}
			lv.acc = &access{tbl: tbl, idx: tbl.Indexes[0], kind: accFull}
			lv.hints = it.tn.IndexHints
			lv.width = len(tbl.Columns)
			for _, c := range tbl.Columns {
				sc.cols = append(sc.cols, scopeCol{db: tbl.DB, table: it.alias, orgTable: tbl.Name, name: c.Name, t: c.Type, col: c, level: li, notNull: c.NotNull})
				if c.Hidden {
					sc.cols[len(sc.cols)-1].name = "" // not addressable by name
				}
			}
		} else {
			sub, err := p.planResultSet(it.sub, parent)
			if err != nil {
				return nil, err
			}
			lv.setSub(sc, sub, "", it.alias, "", li)
		}
		pl.levels = append(pl.levels, lv)
	}
	pl.width = len(sc.cols)
	c := p.newCompiler(sc)

	// USING / NATURAL joins become equality conditions.
	for li, it := range items {
		for _, u := range it.using {
			names := []string{u.Name.O}
			if u.Name.O == "" { // NATURAL
				names = nil
				for _, col := range sc.cols {
					if col.level == li && col.name != "" {
						for _, oc := range sc.cols {
							if oc.level < li && strings.EqualFold(oc.name, col.name) {
								names = append(names, col.name)
								break
							}
						}
					}
				}
			}
			for _, name := range names {
				var lIdx, rIdx = -1, -1
				for i, col := range sc.cols {
					if strings.EqualFold(col.name, name) {
						if col.level < li && lIdx < 0 {
							lIdx = i
						} else if col.level == li {
							rIdx = i
						}
					}
				}
				if lIdx < 0 || rIdx < 0 {
					return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'from clause'", name)
				}
				eq := &ast.BinaryOperationExpr{Op: opcode.EQ,
					L: &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(sc.cols[lIdx].table), Name: ast.NewCIStr(sc.cols[lIdx].name)}},
					R: &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(sc.cols[rIdx].table), Name: ast.NewCIStr(sc.cols[rIdx].name)}}}
				if items[li].on == nil {
					items[li].on = eq
				} else {
					items[li].on = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: items[li].on, R: eq}
				}
			}
		}
	}

	// Conditions: ON conditions belong to their level; WHERE conjuncts go to the first level that
	// has all their columns, unless they read a LEFT-joined level (then they filter after the join).
	for li, it := range items {
		for _, n := range splitAnd(it.on, nil) {
			c.refs = 0
			e, err := c.compile(n)
			if err != nil {
				return nil, err
			}
			target := li
			if !it.left {
				target = maxLevel(c.refs, li)
			}
			pl.levels[target].conds = append(pl.levels[target].conds, &conjunct{e: e, refs: c.refs, node: n})
		}
	}
	var post []Expr
	if sel.Where != nil {
		for _, n := range splitAnd(sel.Where, nil) {
			c.refs = 0
			e, err := c.compile(n)
			if err != nil {
				return nil, err
			}
			if len(pl.levels) == 0 {
				post = append(post, e)
				continue
			}
			target := maxLevel(c.refs, 0)
			readsLeft := false
			for li := 0; li <= target; li++ {
				if pl.levels[li].left && c.refs&(1<<uint(li)) != 0 {
					readsLeft = true
				}
			}
			if readsLeft {
				post = append(post, e)
				continue
			}
			pl.levels[target].conds = append(pl.levels[target].conds, &conjunct{e: e, refs: c.refs, node: n})
		}
	}
	pl.where = andAll(post)
	if order == nil && len(items) > 2 {
		if o := joinOrder(items, pl.levels); o != nil {
			return p.planSelectOrdered(sel, parent, o)
		}
	}

	// Aggregates.
	aggNodes := collectAggs(sel)
	pl.grouped = len(aggNodes) > 0 || sel.GroupBy != nil
	fields := sel.Fields.Fields
	// Field aliases visible to GROUP BY / HAVING / ORDER BY.
	findField := func(name string) int {
		for i, f := range fields {
			if f.WildCard != nil {
				continue
			}
			if f.AsName.O != "" && strings.EqualFold(f.AsName.O, name) {
				return i
			}
		}
		for i, f := range fields {
			if f.WildCard == nil && f.AsName.O == "" {
				if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok && strings.EqualFold(cn.Name.Name.O, name) {
					return i
				}
			}
		}
		return -1
	}
	var groupNodes []ast.ExprNode // GROUP BY items after alias and position resolution
	if sel.GroupBy != nil {
		for _, item := range sel.GroupBy.Items {
			n := item.Expr
			if pos, ok := n.(*ast.PositionExpr); ok {
				if pos.N < 1 || pos.N > len(fields) || fields[pos.N-1].WildCard != nil {
					return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%d' in 'group statement'", pos.N)
				}
				n = fields[pos.N-1].Expr
			} else if cn, ok := n.(*ast.ColumnNameExpr); ok && cn.Name.Table.O == "" {
				if i, _ := sc.find("", "", cn.Name.Name.O); i < 0 {
					if fi := findField(cn.Name.Name.O); fi >= 0 {
						n = fields[fi].Expr
					}
				}
			}
			if containsAgg(n) {
				return nil, sqlerr.New(sqlerr.ErrWrongGroupField, "Can't group on '%s'", exprText(n))
			}
			e, err := c.compile(n)
			if err != nil {
				return nil, err
			}
			pl.groupBy = append(pl.groupBy, e)
			groupNodes = append(groupNodes, n)
		}
	}
	for _, a := range aggNodes {
		spec := aggSpec{fn: strings.ToLower(a.F), distinct: a.Distinct}
		args := a.Args
		if spec.fn == "group_concat" {
			spec.sep = ","
			if len(args) > 1 {
				if v, ok := args[len(args)-1].(*driver.ValueExpr); ok {
					spec.sep = v.GetString()
				}
				args = args[:len(args)-1]
			}
		}
		if spec.fn == "count" && len(args) == 1 {
			if v, ok := args[0].(*driver.ValueExpr); ok && v.Datum.Kind() != driver.KindNull && !a.Distinct {
				spec.star = true
			}
		}
		for _, an := range args {
			if containsAgg(an) {
				return nil, sqlerr.New(sqlerr.ErrInvalidGroupFuncUse, "Invalid use of group function")
			}
			e, err := c.compile(an)
			if err != nil {
				return nil, err
			}
			spec.args = append(spec.args, e)
		}
		if spec.fn == "group_concat" && a.Order != nil {
			nArgs := len(spec.args)
			for _, item := range a.Order.Items {
				// ORDER BY n names the n-th GROUP_CONCAT argument.
				if pos, ok := item.Expr.(*ast.PositionExpr); ok && pos.P == nil {
					if pos.N < 1 || pos.N > nArgs {
						return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%d' in 'order clause'", pos.N)
					}
					spec.order = append(spec.order, sortKey{idx: pos.N - 1, desc: item.Desc})
					continue
				}
				e, err := c.compile(item.Expr)
				if err != nil {
					return nil, err
				}
				spec.order = append(spec.order, sortKey{idx: len(spec.args), desc: item.Desc})
				spec.args = append(spec.args, e)
			}
			spec.nOrder = len(spec.args) - nArgs
		}
		spec.t = aggResultType(spec)
		pl.aggs = append(pl.aggs, spec)
	}
	post2 := c // compiler for expressions after aggregation
	if pl.grouped {
		post2 = p.newCompiler(sc)
		post2.aggs = aggNodes
		post2.aggBase = pl.width
		for _, a := range pl.aggs {
			post2.aggTypes = append(post2.aggTypes, a.t)
		}
	}

	// Select list.
	var projNames []proto.Column
	fieldProj := make([]int, len(fields))
	for fi, f := range fields {
		fieldProj[fi] = len(pl.proj)
		if f.WildCard != nil {
			n := 0
			for _, i := range writtenColumns(sc, written) {
				col := sc.cols[i]
				if col.name == "" {
					continue
				}
				if f.WildCard.Table.O != "" && !strings.EqualFold(col.table, f.WildCard.Table.O) {
					continue
				}
				if f.WildCard.Schema.O != "" && !strings.EqualFold(col.db, f.WildCard.Schema.O) {
					continue
				}
				sc.cols[i].used = true
				pl.proj = append(pl.proj, &colExpr{typed{col.t}, i, col.name})
				projNames = append(projNames, resultColumn(col.name, &sc.cols[i], col.t))
				n++
			}
			if n == 0 {
				if f.WildCard.Table.O != "" {
					return nil, sqlerr.New(sqlerr.ErrBadTable, "Unknown table '%s'", f.WildCard.Table.O)
				}
				if len(pl.levels) == 0 {
					return nil, sqlerr.New(sqlerr.ErrNoTablesUsed, "No tables used")
				}
			}
			continue
		}
		post2.refs = 0
		e, err := post2.compile(f.Expr)
		if err != nil {
			return nil, err
		}
		if pl.grouped {
			if err := p.checkGroupedField(sc, f.Expr, e); err != nil {
				return nil, err
			}
		}
		name := f.AsName.O
		if name == "" {
			name = fieldName(f)
		}
		var sc0 *scopeCol
		if ce, ok := e.(*colExpr); ok && !pl.grouped || ok && ce.idx < pl.width {
			if _, isCol := f.Expr.(*ast.ColumnNameExpr); isCol {
				sc0 = &sc.cols[ce.idx]
			}
		}
		pl.proj = append(pl.proj, e)
		projNames = append(projNames, resultColumn(name, sc0, e.Type()))
	}
	pl.nVisible = len(pl.proj)
	pl.cols = projNames
	var gc *groupCheck
	if pl.grouped && p.s.fullGroupBy() {
		gc = newGroupCheck(sc, pl, sel, groupNodes)
		for fi, f := range fields {
			if f.WildCard != nil {
				for _, i := range writtenColumns(sc, written) {
					col := sc.cols[i]
					if col.name == "" || f.WildCard.Table.O != "" && !strings.EqualFold(col.table, f.WildCard.Table.O) {
						continue
					}
					cn := &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(col.table), Name: ast.NewCIStr(col.name)}}
					if err := gc.check(cn, "SELECT list", fi+1); err != nil {
						return nil, err
					}
				}
				continue
			}
			if err := gc.check(f.Expr, "SELECT list", fi+1); err != nil {
				return nil, err
			}
		}
	}

	// HAVING and ORDER BY may name select-list aliases. HAVING without grouping filters rows.
	if sel.Having != nil {
		hc := post2
		inAlias := false
		hc.aliases = func(name string) (Expr, bool) {
			fi := findField(name)
			if fi < 0 || inAlias {
				return nil, false
			}
			inAlias = true
			e, err := hc.compile(fields[fi].Expr)
			inAlias = false
			return e, err == nil
		}
		hc.aliasFirst = func(name string) bool {
			explicit := false
			for _, f := range fields {
				if f.WildCard == nil && strings.EqualFold(f.AsName.O, name) {
					explicit = true
				}
			}
			if !explicit || sel.GroupBy == nil {
				return explicit
			}
			for _, item := range sel.GroupBy.Items {
				if cn, ok := item.Expr.(*ast.ColumnNameExpr); ok && strings.EqualFold(cn.Name.Name.O, name) {
					return false
				}
			}
			return true
		}
		h, err := hc.compile(sel.Having.Expr)
		if err != nil {
			return nil, err
		}
		hc.aliases, hc.aliasFirst = nil, nil
		if pl.grouped {
			pl.having = h
		} else {
			pl.where = andAll(append(post, h))
		}
	}
	if sel.OrderBy != nil {
		for oi, item := range sel.OrderBy.Items {
			if pos, ok := item.Expr.(*ast.PositionExpr); ok {
				if pos.N < 1 || pos.N > pl.nVisible {
					return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%d' in 'order clause'", pos.N)
				}
				pl.order = append(pl.order, sortKey{idx: pos.N - 1, desc: item.Desc})
				continue
			}
			if cn, ok := item.Expr.(*ast.ColumnNameExpr); ok && cn.Name.Table.O == "" {
				matched := -1
				for i, f := range fields {
					if f.WildCard == nil && f.AsName.O != "" && strings.EqualFold(f.AsName.O, cn.Name.Name.O) {
						matched = i
						break
					}
				}
				if matched >= 0 {
					pl.order = append(pl.order, sortKey{idx: fieldProj[matched], desc: item.Desc})
					continue
				}
			}
			post2.refs = 0
			e, err := post2.compile(item.Expr)
			if err != nil {
				return nil, err
			}
			if gc != nil {
				if err := gc.check(item.Expr, "ORDER BY clause", oi+1); err != nil {
					return nil, err
				}
			}
			// Reuse a visible column when the ORDER BY expression is the same column.
			idx := -1
			if ce, ok := e.(*colExpr); ok {
				for i := 0; i < pl.nVisible; i++ {
					if pe, ok := pl.proj[i].(*colExpr); ok && pe.idx == ce.idx {
						idx = i
						break
					}
				}
			}
			if idx < 0 {
				idx = len(pl.proj)
				pl.proj = append(pl.proj, e)
			}
			pl.order = append(pl.order, sortKey{idx: idx, desc: item.Desc})
		}
		// ENUM and SET sort by member index / bitmask, as in MySQL: sort on a hidden column.
		for i, k := range pl.order {
			if tp := pl.proj[k.idx].Type().Tp; tp == mysql.TypeEnum || tp == mysql.TypeSet {
				pl.order[i].idx = len(pl.proj)
				pl.proj = append(pl.proj, numericContext(pl.proj[k.idx]))
			}
		}
		pl.sortNeeded = len(pl.order) > 0
	}
	if sel.Limit != nil {
		var err error
		if sel.Limit.Count != nil {
			if pl.limit, err = c.compile(sel.Limit.Count); err != nil {
				return nil, err
			}
		}
		if sel.Limit.Offset != nil {
			if pl.offset, err = c.compile(sel.Limit.Offset); err != nil {
				return nil, err
			}
		}
	}
	if sel.LockInfo != nil {
		switch sel.LockInfo.LockType {
		case ast.SelectLockForUpdate, ast.SelectLockForUpdateNoWait, ast.SelectLockForUpdateWaitN:
			pl.lock = txn.LockExclusive
		case ast.SelectLockForShare, ast.SelectLockForShareNoWait:
			pl.lock = txn.LockShared
		}
	}

	// Access paths, then the level filters.
	for li, lv := range pl.levels {
		if lv.acc != nil {
			p.chooseAccess(pl, li, sc)
			if pl.lock != 0 {
				lv.acc.lock = pl.lock
				lv.acc.latest = true
			}
		}
		var es []Expr
		lv.indep = lv.acc != nil && lv.acc.lock == 0 && !lv.left
		for _, cj := range lv.conds {
			es = append(es, cj.e)
			if cj.refs&^(1<<uint(li)) != 0 {
				lv.indep = false
			}
		}
		if lv.indep {
			a := lv.acc
			bounds := append(append(append([]Expr(nil), a.eq...), a.in...), a.lo, a.hi)
			for _, r := range a.ors {
				bounds = append(bounds, r.lo, r.hi)
			}
			for _, b := range bounds {
				if b == nil {
					continue
				}
				if r, ok := refsOf(b, sc); !ok || r != 0 {
					lv.indep = false
				}
			}
		}
		lv.filter = andAll(es)
	}
	pl.correlated = sc.correlated
	return pl, nil
}

func maxLevel(refs uint64, min int) int {
	m := min
	for i := 0; i < 64; i++ {
		if refs&(1<<uint(i)) != 0 && i > m {
			m = i
		}
	}
	return m
}

func andAll(es []Expr) Expr {
	if len(es) == 0 {
		return nil
	}
	e := es[0]
	for _, x := range es[1:] {
		e = &logicExpr{typed{tBool}, opcode.LogicAnd, e, x}
	}
	return e
}

// checkGroupedField enforces nothing yet: without ONLY_FULL_GROUP_BY a non-aggregated column takes
// the value of the group's first row, which is what the aggregation operator provides.
func (p *planner) checkGroupedField(*scope, ast.ExprNode, Expr) error { return nil }

// resultColumn describes a select-list column for the client.
func resultColumn(name string, sc *scopeCol, t types.ColType) proto.Column {
	col := proto.Column{Name: name, Type: wireType(t), Length: displayLength(t), Charset: collationID(t)}
	if t.Frac > 0 {
		col.Decimals = byte(t.Frac)
	} else if t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat || isStringType(t) {
		col.Decimals = 31
		if isStringType(t) {
			col.Decimals = 0
		}
	}
	if t.Unsigned {
		col.Flags |= uint16(mysql.UnsignedFlag)
	}
	if t.Collation == "binary" || !isStringType(t) {
		col.Flags |= uint16(mysql.BinaryFlag)
	}
	if sc != nil {
		col.Schema, col.Table, col.OrgTable, col.OrgName = sc.db, sc.table, sc.orgTable, sc.name
		if sc.notNull {
			col.Flags |= uint16(mysql.NotNullFlag)
		}
		if sc.col != nil {
			col.Flags |= sc.col.keyFlags
		}
	}
	if t.IsBlob() || t.Tp == mysql.TypeJSON {
		col.Flags |= uint16(mysql.BlobFlag)
	}
	switch t.Tp {
	case mysql.TypeEnum, mysql.TypeSet:
		// Sent as CHAR with ENUM_FLAG/SET_FLAG, and the longest member (list) as the length.
		n := 0
		for _, e := range t.Elems {
			if t.Tp == mysql.TypeEnum {
				n = max(n, utf8.RuneCountInString(e))
			} else {
				n += utf8.RuneCountInString(e) + 1
			}
		}
		col.Length = uint32(n) * 4
		if t.Tp == mysql.TypeEnum {
			col.Flags |= uint16(mysql.EnumFlag)
		} else {
			col.Flags |= uint16(mysql.SetFlag)
		}
	case mysql.TypeJSON:
		col.Length = 1<<32 - 1
		col.Flags |= uint16(mysql.BlobFlag | mysql.BinaryFlag)
	}
	return col
}

// wireType maps a column type to the type code sent to clients.
func wireType(t types.ColType) byte {
	switch t.Tp {
	case mysql.TypeVarchar:
		return mysql.TypeVarString
	case mysql.TypeEnum, mysql.TypeSet:
		return mysql.TypeString
	case mysql.TypeNull:
		return mysql.TypeNull
	}
	return t.Tp
}

func collationID(t types.ColType) uint16 {
	if !isStringType(t) || t.Collation == "binary" || t.Collation == "" {
		if isStringType(t) && t.Collation == "" {
			return 255
		}
		return 63
	}
	if c, ok := types.LookupCollation(t.Collation); ok {
		return c.ID
	}
	return 255
}

func colTypeOf(c proto.Column) types.ColType {
	t := types.ColType{Tp: c.Type, Len: int(c.Length), Unsigned: c.Flags&uint16(mysql.UnsignedFlag) != 0}
	if c.Decimals != 31 {
		t.Frac = int(c.Decimals)
	}
	if c.Charset == 63 {
		t.Collation = "binary"
	} else if coll, ok := types.CollationByID(c.Charset); ok {
		t.Collation = coll.Name
		t.Charset = coll.Charset
	}
	if t.Tp == mysql.TypeVarString && c.Charset != 63 {
		t.Len = int(c.Length) / 4
	}
	return t
}

// fieldName is the column name MySQL shows for an unaliased select expression: its text.
func fieldName(f *ast.SelectField) string {
	if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return cn.Name.Name.O
	}
	if v, ok := f.Expr.(*driver.ValueExpr); ok {
		// A literal's column is named by its value: SELECT 'it''s' gives it's.
		if v.Datum.Kind() == driver.KindString || v.Datum.Kind() == driver.KindBytes {
			return v.GetString()
		}
	}
	if t := strings.TrimSpace(f.Text()); t != "" {
		return t
	}
	return exprText(f.Expr)
}

func exprText(n ast.Node) string {
	if t := n.Text(); t != "" {
		return t
	}
	if v, ok := n.(*driver.ValueExpr); ok {
		return types.ToString(datumValue(&v.Datum))
	}
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return ""
	}
	return sb.String()
}

// collectAggs finds the aggregate calls of a query block (not inside subqueries).
func collectAggs(sel *ast.SelectStmt) []*ast.AggregateFuncExpr {
	v := &aggCollector{}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(v)
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	return v.aggs
}

type aggCollector struct {
	aggs []*ast.AggregateFuncExpr
}

func (v *aggCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		return n, true
	case *ast.AggregateFuncExpr:
		v.aggs = append(v.aggs, x)
		return n, true
	}
	return n, false
}

func (v *aggCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func containsAgg(n ast.ExprNode) bool {
	v := &aggCollector{}
	n.Accept(v)
	return len(v.aggs) > 0
}

func aggResultType(a aggSpec) types.ColType {
	var at types.ColType
	if len(a.args) > 0 {
		at = a.args[0].Type()
	}
	switch a.fn {
	case "count":
		return tInt
	case "sum":
		if isIntType(at) || at.Tp == mysql.TypeNewDecimal {
			t := tDecimal
			t.Frac = max(at.Frac, 0)
			if isIntType(at) {
				t.Frac = 0
			}
			return t
		}
		return tDouble
	case "avg":
		if isIntType(at) || at.Tp == mysql.TypeNewDecimal {
			t := tDecimal
			t.Frac = max(at.Frac, 0) + 4
			return t
		}
		return tDouble
	case "min", "max":
		return at
	case "group_concat":
		t := tString
		for _, e := range a.args[:len(a.args)-a.nOrder] {
			if et := e.Type(); et.Collation == "binary" && isStringType(et) {
				t = tBytes
			}
		}
		t.Len = 1024
		return t
	case "json_arrayagg", "json_objectagg":
		return tJSON
	case "bit_and", "bit_or", "bit_xor":
		return tUint
	case "std", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp":
		return tDouble
	}
	return at
}

// writtenColumns lists scope columns in the FROM clause's written order (levels may be reordered).
func writtenColumns(sc *scope, written []int) []int {
	var out []int
	for _, lvl := range written {
		for i, c := range sc.cols {
			if c.level == lvl {
				out = append(out, i)
			}
		}
	}
	return out
}

// joinOrder picks a nested-loop order for a FROM list of inner joins: start from a table with a
// condition of its own (a constant filter), then repeatedly add a table that a condition connects to
// the tables already placed, so each new level is a lookup or a filtered scan instead of a cross
// product. It returns nil when the written order is kept (outer joins, USING, or no better order).
func joinOrder(items []fromItem, levels []*level) []int {
	n := len(items)
	for _, it := range items {
		if it.left || len(it.using) > 0 {
			return nil
		}
	}
	var conds []uint64
	for _, lv := range levels {
		for _, cj := range lv.conds {
			conds = append(conds, cj.refs)
		}
	}
	placed := uint64(0)
	var order []int
	selfFilter := func(i int) bool {
		for _, r := range conds {
			if r == 1<<uint(i) {
				return true
			}
		}
		return false
	}
	connected := func(i int) bool {
		bit := uint64(1) << uint(i)
		for _, r := range conds {
			if r&bit != 0 && r&placed != 0 && r&^(placed|bit) == 0 {
				return true
			}
		}
		return false
	}
	for len(order) < n {
		pick := -1
		for i := 0; i < n && pick < 0; i++ {
			if placed&(1<<uint(i)) == 0 && len(order) > 0 && connected(i) {
				pick = i
			}
		}
		if pick < 0 && len(order) == 0 {
			for i := 0; i < n && pick < 0; i++ {
				if selfFilter(i) {
					pick = i
				}
			}
		}
		for i := 0; i < n && pick < 0; i++ {
			if placed&(1<<uint(i)) == 0 {
				pick = i
			}
		}
		order = append(order, pick)
		placed |= 1 << uint(pick)
	}
	for i, o := range order {
		if i != o {
			return order
		}
	}
	return nil
}

// displayLength is the column-definition length MySQL sends: the display width of numbers and
// temporal types, and for strings the maximum length in bytes (characters times the charset's
// widest character).
func displayLength(t types.ColType) uint32 {
	width := uint32(4)
	switch t.Charset {
	case "latin1", "ascii", "binary":
		width = 1
	case "utf8mb3", "utf8":
		width = 3
	}
	if t.Collation == "binary" {
		width = 1
	}
	n := uint32(max(t.Len, 0))
	switch t.Tp {
	case mysql.TypeTiny:
		return pickLen(t.Unsigned, 3, 4)
	case mysql.TypeShort:
		return pickLen(t.Unsigned, 5, 6)
	case mysql.TypeInt24:
		return pickLen(t.Unsigned, 8, 9)
	case mysql.TypeLong:
		return pickLen(t.Unsigned, 10, 11)
	case mysql.TypeLonglong:
		return 20
	case mysql.TypeNewDecimal:
		if t.Len <= 0 {
			return n
		}
		l := n
		if t.Frac > 0 {
			l++
		}
		if !t.Unsigned {
			l++
		}
		return l
	case mysql.TypeFloat:
		if t.Len > 0 {
			return n
		}
		return 12
	case mysql.TypeDouble:
		if t.Len > 0 {
			return n
		}
		return 22
	case mysql.TypeYear:
		return 4
	case mysql.TypeDate, mysql.TypeNewDate:
		return 10
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		if t.Frac > 0 {
			return 20 + uint32(t.Frac)
		}
		return 19
	case mysql.TypeDuration:
		if t.Frac > 0 {
			return 11 + uint32(t.Frac)
		}
		return 10
	case mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if t.Len > 0 {
			return n * width
		}
		return uint32(min(uint64(types.TextLimit(t.Tp))*uint64(width), 1<<32-1))
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString:
		return n * width
	}
	return n
}

func pickLen(unsigned bool, u, s uint32) uint32 {
	if unsigned {
		return u
	}
	return s
}

// setSub makes a derived table (a subquery in FROM, or a view) the level's source and adds its
// visible columns to the scope under alias.
func (lv *level) setSub(sc *scope, sub *selectPlan, db, alias, orgTable string, li int) {
	lv.sub = sub
	lv.width = sub.nVisible
	for i := 0; i < sub.nVisible; i++ {
		c := sub.cols[i]
		sc.cols = append(sc.cols, scopeCol{db: db, table: alias, orgTable: orgTable, name: c.Name, t: colTypeOf(c), level: li})
	}
}
