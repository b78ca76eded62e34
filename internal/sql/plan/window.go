package plan

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Window functions (MySQL 8.0), planned only for a query block that has some (collectAggs finds
// them in the same walk as its aggregates). Each call's window is resolved against the block's
// named windows (WINDOW w AS (...), inheritance of PARTITION BY and ORDER BY), checked as MySQL
// checks it (errors 3579-3596), and calls with the same resolved window share one exec.Window, so
// the rows are sorted once per distinct window. The functions' arguments, PARTITION BY and ORDER
// BY are compiled over the aggregated row (after GROUP BY: they may hold the block's aggregates);
// the select list and ORDER BY read the results as columns after that row (windowRefs). Anywhere
// else (WHERE, GROUP BY, HAVING, another window function's arguments) a window function is error
// 3593.

// windowRefs maps the block's window function calls to their result columns.
type windowRefs struct {
	nodes []*ast.WindowFuncExpr
	types []types.ColType
	base  int
}

const unnamedWindow = "<unnamed window>"

// windowRef compiles a window function call to its result column, where the compiler reads them.
func (c *Compiler) windowRef(x *ast.WindowFuncExpr) (expr.Expr, error) {
	if c.wins != nil {
		for i, n := range c.wins.nodes {
			if n == x {
				return &expr.Col{Typed: expr.Typed{T: c.wins.types[i]}, Idx: c.wins.base + i, Name: x.Name}, nil
			}
		}
	}
	return nil, c.errf(sqlerr.ErrWindowInvalidWindowFuncUse, "You cannot use the window function '%s' in this context.'", strings.ToLower(x.Name))
}

// projCompiler is the compiler of the select list and ORDER BY: the one that reads window results
// when the block has window functions.
func (b *selectBuilder) projCompiler() *Compiler {
	if b.winc != nil {
		return b.winc
	}
	return b.post2
}

// resolvedWindow is a window specification with its named windows' clauses merged in.
type resolvedWindow struct {
	name      string
	partition *ast.PartitionByClause
	order     *ast.OrderByClause
	frame     *ast.FrameClause
}

// planWindows is step 5's last part: the block's windows and the compiler that reads their results.
func (b *selectBuilder) planWindows() error {
	named, err := b.namedWindows()
	if err != nil || len(b.winNodes) == 0 {
		return err
	}
	pl := b.pl
	pl.WinBase = pl.Width
	if pl.Grouped {
		pl.WinBase += len(pl.Aggs)
	}
	refs := &windowRefs{base: pl.WinBase}
	byKey := map[string]*exec.Window{}
	for slot, x := range b.winNodes {
		rw, err := resolveWindow(&x.Spec, named, 0)
		if err != nil {
			return err
		}
		fn, err := b.windowFn(x, slot)
		if err != nil {
			return err
		}
		key := rw.key()
		win := byKey[key]
		if win == nil {
			if win, err = b.window(rw); err != nil {
				return err
			}
			byKey[key] = win
			pl.Windows = append(pl.Windows, win)
		}
		win.Fns = append(win.Fns, fn)
		refs.nodes = append(refs.nodes, x)
		refs.types = append(refs.types, fn.T)
	}
	pl.NWin = len(b.winNodes)
	c := *b.post2
	c.wins = refs
	b.winc = &c
	return nil
}

// namedWindows collects the WINDOW clause (error 3591 for a name defined twice) and checks each
// definition even when no call uses it, as MySQL does.
func (b *selectBuilder) namedWindows() (map[string]*ast.WindowSpec, error) {
	specs := b.sel.WindowSpecs
	if len(specs) == 0 {
		return nil, nil
	}
	named := make(map[string]*ast.WindowSpec, len(specs))
	for i := range specs {
		s := &specs[i]
		if _, dup := named[s.Name.L]; dup {
			return nil, sqlerr.New(sqlerr.ErrWindowDuplicateName, "Window '%s' is defined twice.", s.Name.O)
		}
		named[s.Name.L] = s
	}
	for i := range specs {
		if _, err := resolveWindow(&specs[i], named, 0); err != nil {
			return nil, err
		}
	}
	return named, nil
}

// resolveWindow merges spec with the window it names (OVER w, or OVER (w ORDER BY ...), or WINDOW
// w2 AS (w1 ...)) under MySQL's inheritance rules.
func resolveWindow(spec *ast.WindowSpec, named map[string]*ast.WindowSpec, depth int) (resolvedWindow, error) {
	if depth > len(named)+1 {
		return resolvedWindow{}, sqlerr.New(sqlerr.ErrWindowCircularity, "There is a circularity in the window dependency graph.")
	}
	if spec.OnlyAlias { // OVER w
		def, ok := named[spec.Name.L]
		if !ok {
			return resolvedWindow{}, sqlerr.New(sqlerr.ErrWindowNoSuchWindow, "Window name '%s' is not defined.", spec.Name.O)
		}
		return resolveWindow(def, named, depth+1)
	}
	rw := resolvedWindow{name: spec.Name.O, partition: spec.PartitionBy, order: spec.OrderBy, frame: spec.Frame}
	if rw.name == "" {
		rw.name = unnamedWindow
	}
	if spec.Ref.L != "" {
		def, ok := named[spec.Ref.L]
		if !ok {
			return rw, sqlerr.New(sqlerr.ErrWindowNoSuchWindow, "Window name '%s' is not defined.", spec.Ref.O)
		}
		base, err := resolveWindow(def, named, depth+1)
		if err != nil {
			return rw, err
		}
		if spec.PartitionBy != nil {
			return rw, sqlerr.New(sqlerr.ErrWindowNoChildPartitioning, "A window which depends on another cannot define partitioning.")
		}
		if base.frame != nil {
			return rw, sqlerr.New(sqlerr.ErrWindowNoInheritFrame, "Window '%s' has a frame definition, so cannot be referenced by another window.", spec.Ref.O)
		}
		if base.order != nil && spec.OrderBy != nil {
			return rw, sqlerr.New(sqlerr.ErrWindowNoRedefineOrderBy, "Window '%s' cannot inherit '%s' since both contain an ORDER BY clause.", rw.name, spec.Ref.O)
		}
		rw.partition = base.partition
		if rw.order == nil {
			rw.order = base.order
		}
	}
	return rw, rw.check()
}

// check is MySQL's checks of a window's clauses that need no types: positions in PARTITION BY or
// ORDER BY (3592) and impossible frame bounds (3584-3586, 3596).
func (rw *resolvedWindow) check() error {
	var items []*ast.ByItem
	if rw.partition != nil {
		items = append(items, rw.partition.Items...)
	}
	if rw.order != nil {
		items = append(items, rw.order.Items...)
	}
	for _, it := range items {
		if _, ok := it.Expr.(*ast.PositionExpr); ok {
			return sqlerr.New(sqlerr.ErrWindowIllegalOrderBy, "Window '%s': ORDER BY or PARTITION BY uses legacy position indication which is not supported, use expression.", rw.name)
		}
	}
	f := rw.frame
	if f == nil {
		return nil
	}
	if f.Extent.Start.UnBounded && f.Extent.Start.Type == ast.Following {
		return sqlerr.New(sqlerr.ErrWindowFrameStartIllegal, "Window '%s': frame start cannot be UNBOUNDED FOLLOWING.", rw.name)
	}
	if f.Extent.End.UnBounded && f.Extent.End.Type == ast.Preceding {
		return sqlerr.New(sqlerr.ErrWindowFrameEndIllegal, "Window '%s': frame end cannot be UNBOUNDED PRECEDING.", rw.name)
	}
	for _, fb := range []*ast.FrameBound{&f.Extent.Start, &f.Extent.End} {
		if fb.UnBounded || fb.Type == ast.CurrentRow {
			continue
		}
		if fb.Unit != ast.TimeUnitInvalid && f.Type == ast.Rows {
			return sqlerr.New(sqlerr.ErrWindowRowsIntervalUse, "Window '%s': INTERVAL can only be used with RANGE frames.", rw.name)
		}
		v, ok := fb.Expr.(*driver.ValueExpr)
		if !ok {
			if _, param := fb.Expr.(*driver.ParamMarkerExpr); param {
				continue
			}
			return sqlerr.New(sqlerr.ErrWindowRangeBoundNotConstant, "Window '%s' has a non-constant frame bound.", rw.name)
		}
		if fb.Unit != ast.TimeUnitInvalid {
			continue
		}
		if !frameOffsetOK(v, f.Type == ast.Rows) {
			return sqlerr.New(sqlerr.ErrWindowFrameIllegal, "Window '%s': frame start or end is negative, NULL or of non-integral type", rw.name)
		}
	}
	return nil
}

// frameOffsetOK: a ROWS offset is a non-negative integer; a RANGE offset a non-negative number.
func frameOffsetOK(v *driver.ValueExpr, rows bool) bool {
	switch v.Datum.Kind() {
	case driver.KindInt64:
		return v.Datum.GetInt64() >= 0
	case driver.KindUint64:
		return true
	case driver.KindMysqlDecimal:
		return !rows && !strings.HasPrefix(v.Datum.GetMysqlDecimal().String(), "-")
	case driver.KindFloat64, driver.KindFloat32:
		return !rows && v.Datum.GetFloat64() >= 0
	}
	return false
}

// key identifies a resolved window: calls with equal keys share one exec.Window.
func (rw *resolvedWindow) key() string {
	var sb strings.Builder
	if rw.partition != nil {
		sb.WriteString(exprText(rw.partition))
	}
	sb.WriteByte(0)
	if rw.order != nil {
		sb.WriteString(exprText(rw.order))
	}
	sb.WriteByte(0)
	if rw.frame != nil {
		sb.WriteString(exprText(rw.frame))
	}
	return sb.String()
}

// window compiles a resolved window's PARTITION BY, ORDER BY and frame.
func (b *selectBuilder) window(rw resolvedWindow) (*exec.Window, error) {
	win := &exec.Window{Name: rw.name}
	c := b.post2
	if rw.partition != nil && hasWindowFn(rw.partition) || rw.order != nil && hasWindowFn(rw.order) {
		return nil, sqlerr.New(sqlerr.ErrWindowNestedInSpec, "You cannot nest a window function in the specification of window '%s'.", rw.name)
	}
	if rw.partition != nil {
		for _, it := range rw.partition.Items {
			e, err := c.Compile(it.Expr)
			if err != nil {
				return nil, err
			}
			win.Partition = append(win.Partition, e)
		}
	}
	if rw.order != nil {
		for _, it := range rw.order.Items {
			e, err := c.Compile(it.Expr)
			if err != nil {
				return nil, err
			}
			win.Order = append(win.Order, e)
			win.Desc = append(win.Desc, it.Desc)
		}
	}
	if rw.frame == nil {
		return win, nil
	}
	f := &exec.Frame{Range: rw.frame.Type == ast.Ranges}
	var err error
	if f.Start, err = b.frameBound(&rw.frame.Extent.Start); err != nil {
		return nil, err
	}
	if f.End, err = b.frameBound(&rw.frame.Extent.End); err != nil {
		return nil, err
	}
	win.Frame = f
	return win, b.checkRangeFrame(win, rw.frame)
}

// checkRangeFrame: a RANGE frame with N PRECEDING/FOLLOWING needs exactly one numeric ORDER BY
// key (3587); a DATE/DATETIME/TIMESTAMP key takes INTERVAL bounds only (3588), a numeric one
// plain numbers only (3589).
func (b *selectBuilder) checkRangeFrame(win *exec.Window, fc *ast.FrameClause) error {
	f := win.Frame
	if !f.Range || f.Start.N == nil && f.End.N == nil {
		return nil
	}
	if len(win.Order) != 1 {
		return sqlerr.New(sqlerr.ErrWindowRangeFrameOrderType, "Window '%s' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type", win.Name)
	}
	t := win.Order[0].Type()
	interval := fc.Extent.Start.Unit != ast.TimeUnitInvalid || fc.Extent.End.Unit != ast.TimeUnitInvalid
	switch {
	case expr.IsIntType(t) || t.Tp == mysql.TypeNewDecimal || t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat:
		if interval {
			return sqlerr.New(sqlerr.ErrWindowRangeFrameNumeric, "Window '%s' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed.", win.Name)
		}
		return nil
	case t.Tp == mysql.TypeDate || t.Tp == mysql.TypeDatetime || t.Tp == mysql.TypeTimestamp || t.Tp == mysql.TypeDuration:
		if !interval {
			return sqlerr.New(sqlerr.ErrWindowRangeFrameTemporal, "Window '%s' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed.", win.Name)
		}
		if t.Tp == mysql.TypeDuration {
			return sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of MySQL doesn't yet support 'RANGE frames over TIME with INTERVAL bounds'")
		}
		return nil
	}
	return sqlerr.New(sqlerr.ErrWindowRangeFrameOrderType, "Window '%s' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type", win.Name)
}

// frameBound compiles one frame bound (its offset is a constant or a placeholder).
func (b *selectBuilder) frameBound(fb *ast.FrameBound) (exec.FrameBound, error) {
	switch {
	case fb.Type == ast.CurrentRow:
		return exec.FrameBound{Kind: exec.CurrentRow}, nil
	case fb.UnBounded && fb.Type == ast.Preceding:
		return exec.FrameBound{Kind: exec.UnboundedPreceding}, nil
	case fb.UnBounded:
		return exec.FrameBound{Kind: exec.UnboundedFollowing}, nil
	}
	e, err := b.c.Compile(fb.Expr)
	if err != nil {
		return exec.FrameBound{}, err
	}
	k := exec.Following
	if fb.Type == ast.Preceding {
		k = exec.Preceding
	}
	unit := ""
	if fb.Unit != ast.TimeUnitInvalid {
		unit = strings.ToUpper(fb.Unit.String())
	}
	return exec.FrameBound{Kind: k, N: e, Unit: unit}, nil
}

// windowFn compiles one window function call: its arguments over the aggregated row, its result
// type, and for an aggregate OVER a window the aggregate's spec.
func (b *selectBuilder) windowFn(x *ast.WindowFuncExpr, slot int) (exec.WinFn, error) {
	name := strings.ToLower(x.Name)
	fn := exec.WinFn{Fn: name, Slot: slot}
	switch {
	case x.IgnoreNull:
		return fn, sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of MySQL doesn't yet support 'IGNORE NULLS'")
	case x.FromLast:
		return fn, sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of MySQL doesn't yet support 'FROM LAST'")
	case x.Distinct:
		return fn, sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of MySQL doesn't yet support '<window function>(DISTINCT ..)'")
	}
	switch name {
	case "row_number", "rank", "dense_rank", "ntile":
		fn.T = expr.TInt
	case "percent_rank", "cume_dist":
		fn.T = expr.TDouble
	case "lag", "lead", "first_value", "last_value", "nth_value":
	case "count", "sum", "avg", "min", "max", "bit_and", "bit_or", "bit_xor", "json_arrayagg",
		"json_objectagg", "std", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp":
		spec, err := b.aggregateWith(&ast.AggregateFuncExpr{F: name, Args: x.Args}, b.post2)
		if err != nil {
			return fn, err
		}
		fn.Agg, fn.Args, fn.T = &spec, spec.Args, spec.T
		return fn, nil
	default:
		return fn, sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of MySQL doesn't yet support '%s as a window function'", name)
	}
	for _, a := range x.Args {
		e, err := b.post2.Compile(a)
		if err != nil {
			return fn, err
		}
		fn.Args = append(fn.Args, e)
	}
	if fn.T.Tp == 0 {
		fn.T = fn.Args[0].Type()
		if len(fn.Args) > 2 { // LAG/LEAD's default: one result type for both, as CASE derives it
			fn.T = expr.UnifyTypes(fn.Args[0], fn.Args[2])
		}
	}
	return fn, nil
}

// hasWindowFn reports whether n holds a window function call (outside subqueries).
func hasWindowFn(n ast.Node) bool {
	v := &aggCollector{}
	n.Accept(v)
	return len(v.wins) > 0
}

// checkWindowAlias is MySQL's 3594: HAVING names a select-list alias whose expression holds a
// window function (computed only after HAVING).
func (b *selectBuilder) checkWindowAlias(n ast.ExprNode) error {
	var bad string
	ast.Node(n).Accept(&columnVisitor{fn: func(cn *ast.ColumnNameExpr) {
		if bad != "" || cn.Name.Table.O != "" {
			return
		}
		if i, _ := b.sc.find("", "", cn.Name.Name.O); i >= 0 {
			return
		}
		if fi := findField(b.sel.Fields.Fields, cn.Name.Name.O); fi >= 0 {
			if hasWindowFn(b.sel.Fields.Fields[fi].Expr) {
				bad = cn.Name.Name.O
			}
		}
	}})
	if bad != "" {
		return sqlerr.New(sqlerr.ErrWindowInvalidAliasUse, "You cannot use the alias '%s' of an expression containing a window function in this context.'", bad)
	}
	return nil
}

// columnVisitor calls fn for each column reference outside subqueries.
type columnVisitor struct{ fn func(*ast.ColumnNameExpr) }

func (v *columnVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		return n, true
	case *ast.ColumnNameExpr:
		v.fn(x)
	}
	return n, false
}

func (v *columnVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// NoWindowFuncs is error 3593 for a clause where MySQL allows no window function that the
// planner does not see as such (UPDATE/DELETE ... ORDER BY).
func NoWindowFuncs(n ast.Node) error {
	v := &aggCollector{}
	n.Accept(v)
	if len(v.wins) > 0 {
		return sqlerr.New(sqlerr.ErrWindowInvalidWindowFuncUse, "You cannot use the window function '%s' in this context.'", strings.ToLower(v.wins[0].Name))
	}
	return nil
}
