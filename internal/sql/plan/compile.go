package plan

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// scopeCol is one column visible to name resolution.
type ScopeCol struct {
	db, table, Name string // table is the alias
	orgTable        string
	T               types.ColType
	col             *catalog.Column // nil for derived columns
	level           int             // FROM-list position that produces it
	notNull         bool
	used            bool // referenced by the query (covering-index decisions)
}

// scope is the row layout an expression is compiled against.
type Scope struct {
	Cols       []ScopeCol
	parent     *Scope // enclosing query (correlated subqueries)
	correlated bool   // some expression reads an enclosing query's row
	childRefs  uint64 // levels of this scope read by subqueries compiled since the last reset
}

func (s *Scope) find(db, table, name string) (int, error) {
	found := -1
	for i := range s.Cols {
		c := &s.Cols[i]
		if !strings.EqualFold(c.Name, name) {
			continue
		}
		if table != "" && !strings.EqualFold(c.table, table) {
			continue
		}
		if db != "" && !strings.EqualFold(c.db, db) {
			continue
		}
		if found >= 0 {
			return -1, sqlerr.New(sqlerr.ErrNonUniq, "Column '%s' in field list is ambiguous", name)
		}
		found = i
	}
	return found, nil
}

// Compiler turns AST expressions into Exprs over a scope.
type Compiler struct {
	s  Context
	sc *Scope
	// Aggregation: when aggs is set, aggregate calls compile to references at aggBase+i.
	aggs     []*ast.AggregateFuncExpr
	aggTypes []types.ColType
	aggBase  int32 // int32 beside correlated: the Compiler (one per statement) stays in a 128-byte size class
	// Windows: when wins is set, window function calls compile to references at winBase+i.
	wins *windowRefs
	// outer references made (correlated subquery).
	correlated bool
	// aliases resolves names not found in the scope to select-list expressions (HAVING, ORDER BY).
	aliases func(name string) (expr.Expr, bool)
	// aliasFirst, when set, says which names resolve to a select-list alias before a column of
	// the scope (HAVING: an alias wins unless the name is a GROUP BY column, as in MySQL).
	aliasFirst func(name string) bool
	// levels referenced by the last compiled expression (bit per FROM position).
	refs   uint64
	params *int // number of placeholders seen, shared across a statement
	// insertValues: the row VALUES(col) refers to in ON DUPLICATE KEY UPDATE.
	ValuesRow func(name string) (expr.Expr, error)
	planSub   func(c *Compiler, sel ast.ResultSetNode) (*subPlan, error)
}

func (c *Compiler) errf(code uint16, format string, args ...any) error {
	return sqlerr.New(code, format, args...)
}

func (c *Compiler) Compile(n ast.ExprNode) (expr.Expr, error) {
	if err := c.s.EnterExpr(); err != nil {
		return nil, err
	}
	defer c.s.LeaveExpr()
	switch x := n.(type) {
	case *driver.ValueExpr:
		k := expr.NewConst(DatumValue(&x.Datum))
		k.Hex = x.Datum.Kind() == driver.KindBinaryLiteral
		return k, nil
	case *driver.ParamMarkerExpr:
		return &expr.Param{Typed: expr.Typed{T: expr.TString}, Idx: x.Order}, nil
	case *ast.ParenthesesExpr:
		return c.Compile(x.Expr)
	case *ast.ColumnNameExpr:
		return c.column(x.Name)
	case *ast.BinaryOperationExpr:
		return c.binary(x)
	case *ast.UnaryOperationExpr:
		return c.unary(x)
	case *ast.IsNullExpr:
		e, err := c.Compile(x.Expr)
		if err != nil {
			return nil, err
		}
		return &expr.IsNull{Typed: expr.Typed{T: expr.TBool}, E: e, Not: x.Not}, nil
	case *ast.IsTruthExpr:
		e, err := c.Compile(x.Expr)
		if err != nil {
			return nil, err
		}
		return &expr.IsTruth{Typed: expr.Typed{T: expr.TBool}, E: e, Not: x.Not, True: x.True != 0}, nil
	case *ast.PatternInExpr:
		return c.in(x)
	case *ast.BetweenExpr:
		return c.between(x)
	case *ast.PatternLikeOrIlikeExpr:
		return c.like(x)
	case *ast.FuncCallExpr:
		return c.funcCall(x)
	case *ast.AggregateFuncExpr:
		for i, a := range c.aggs {
			if a == x {
				return &expr.Col{Typed: expr.Typed{T: c.aggTypes[i]}, Idx: int(c.aggBase) + i, Name: x.F}, nil
			}
		}
		return nil, c.errf(sqlerr.ErrInvalidGroupFuncUse, "Invalid use of group function")
	case *ast.WindowFuncExpr:
		return c.windowRef(x)
	case *ast.CaseExpr:
		return c.caseExpr(x)
	case *ast.FuncCastExpr:
		return c.cast(x)
	case *ast.VariableExpr:
		return c.variable(x)
	case *ast.SubqueryExpr:
		return c.subquery(x, expr.SubScalar)
	case *ast.ExistsSubqueryExpr:
		return c.exists(x)
	case *ast.CompareSubqueryExpr:
		return c.compareSubquery(x)
	case *ast.RowExpr:
		return c.row(x)
	case *ast.ValuesExpr:
		if c.ValuesRow == nil {
			return expr.NewConst(types.Null), nil
		}
		return c.ValuesRow(x.Column.Name.Name.L)
	case *ast.DefaultExpr:
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "DEFAULT is only supported as an inserted value")
	case *ast.SetCollationExpr:
		return c.setCollation(x)
	case *ast.TimeUnitExpr, *ast.TrimDirectionExpr:
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported expression")
	case *ast.PatternRegexpExpr:
		return c.regexp(x)
	}
	return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported expression %T", n)
}

// unary binds -x (folding a constant), +x, NOT x and ~x.
func (c *Compiler) unary(x *ast.UnaryOperationExpr) (expr.Expr, error) {
	e, err := c.Compile(x.V)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case opcode.Minus:
		if k, ok := e.(*expr.Const); ok && !k.V.IsNull() {
			v, err := types.Neg(k.V)
			if err == nil {
				return expr.NewConst(v), nil
			}
		}
		e = expr.NumericContext(e)
		return &expr.Neg{Typed: expr.Typed{T: expr.NumType(e.Type())}, E: e}, nil
	case opcode.Plus:
		return e, nil
	case opcode.Not, opcode.Not2:
		return &expr.Not{Typed: expr.Typed{T: expr.TBool}, E: e}, nil
	case opcode.BitNeg:
		return &expr.BitNeg{Typed: expr.Typed{T: expr.TUint}, E: e}, nil
	}
	return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported unary operator %s", x.Op)
}

// between binds x [NOT] BETWEEN lo AND hi.
func (c *Compiler) between(x *ast.BetweenExpr) (expr.Expr, error) {
	e, err := c.Compile(x.Expr)
	if err != nil {
		return nil, err
	}
	lo, err := c.Compile(x.Left)
	if err != nil {
		return nil, err
	}
	hi, err := c.Compile(x.Right)
	if err != nil {
		return nil, err
	}
	return &expr.Between{Typed: expr.Typed{T: expr.TBool}, E: e, Lo: lo, Hi: hi, Not: x.Not, Coll: c.collationOf(e, lo, hi)}, nil
}

// like binds [NOT] LIKE and ILIKE: ILIKE, or a case-insensitive collation, folds case.
func (c *Compiler) like(x *ast.PatternLikeOrIlikeExpr) (expr.Expr, error) {
	e, err := c.Compile(x.Expr)
	if err != nil {
		return nil, err
	}
	p, err := c.Compile(x.Pattern)
	if err != nil {
		return nil, err
	}
	coll := c.collationOf(e, p)
	fold := !x.IsLike || (coll != nil && expr.IsCI(coll))
	return &expr.Like{Typed: expr.Typed{T: expr.TBool}, E: e, Pat: p, Not: x.Not, Escape: x.Escape, Fold: fold}, nil
}

// exists binds [NOT] EXISTS (subquery).
func (c *Compiler) exists(x *ast.ExistsSubqueryExpr) (expr.Expr, error) {
	sq, ok := x.Sel.(*ast.SubqueryExpr)
	if !ok {
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported EXISTS operand")
	}
	e, err := c.subquery(sq, expr.SubExists)
	if err != nil {
		return nil, err
	}
	if x.Not {
		return &expr.Not{Typed: expr.Typed{T: expr.TBool}, E: e}, nil
	}
	return e, nil
}

// row binds a row constructor (a, b, ...).
func (c *Compiler) row(x *ast.RowExpr) (expr.Expr, error) {
	items := make([]expr.Expr, len(x.Values))
	for i, v := range x.Values {
		e, err := c.Compile(v)
		if err != nil {
			return nil, err
		}
		items[i] = e
	}
	return &expr.Row{Typed: expr.Typed{T: expr.TNull}, Items: items}, nil
}

// setCollation binds x COLLATE name: only a string operand takes the collation.
func (c *Compiler) setCollation(x *ast.SetCollationExpr) (expr.Expr, error) {
	e, err := c.Compile(x.Expr)
	if err != nil {
		return nil, err
	}
	coll, ok := types.LookupCollation(strings.ToLower(x.Collate))
	if !ok {
		return nil, c.errf(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", x.Collate)
	}
	t := e.Type()
	if !expr.IsStringType(t) {
		return e, nil
	}
	t.Collation, t.Charset = coll.Name, coll.Charset
	return &expr.Collate{Typed: expr.Typed{T: t}, E: e}, nil
}

// DatumValue converts a parser literal to a Value.
func DatumValue(d *driver.Datum) types.Value {
	switch d.Kind() {
	case driver.KindNull:
		return types.Null
	case driver.KindInt64:
		return types.NewInt(d.GetInt64())
	case driver.KindUint64:
		return types.NewUint(d.GetUint64())
	case driver.KindFloat32:
		return types.NewFloat(float64(d.GetFloat32()))
	case driver.KindFloat64:
		return types.NewFloat(d.GetFloat64())
	case driver.KindString:
		return types.NewString(d.GetString())
	case driver.KindBytes:
		return types.NewBytes(string(d.GetBytes()))
	case driver.KindMysqlDecimal:
		dec := d.GetMysqlDecimal()
		s := dec.String()
		v, err := parseDecimalValue(s)
		if err != nil {
			return types.NewString(s)
		}
		return v
	case driver.KindBinaryLiteral:
		return types.NewBytes(string(d.GetBinaryLiteral()))
	}
	return types.NewString(fmt.Sprint(d.GetValue()))
}

func (c *Compiler) column(n *ast.ColumnName) (expr.Expr, error) {
	db, tbl, name := n.Schema.O, n.Table.O, n.Name.O
	if tbl == "" && c.aliasFirst != nil && c.aliases != nil && c.aliasFirst(name) {
		if e, ok := c.aliases(name); ok {
			return e, nil
		}
	}
	for sc, depth := c.sc, 0; sc != nil; sc, depth = sc.parent, depth+1 {
		i, err := sc.find(db, tbl, name)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			if depth == 0 && tbl == "" && c.aliases != nil {
				if e, ok := c.aliases(name); ok {
					return e, nil
				}
			}
			continue
		}
		col := &sc.Cols[i]
		if depth == 0 {
			c.refs |= 1 << uint(col.level)
			col.used = true
			return &expr.Col{Typed: expr.Typed{T: col.T}, Idx: i, Name: col.Name}, nil
		}
		c.correlated = true
		col.used = true
		for m := c.sc; m != sc; m = m.parent {
			m.correlated = true
		}
		sc.childRefs |= 1 << uint(col.level)
		return &expr.OuterCol{Typed: expr.Typed{T: col.T}, Depth: depth, Idx: i}, nil
	}
	full := name
	if tbl != "" {
		full = tbl + "." + name
	}
	return nil, c.errf(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", full)
}

func (c *Compiler) binary(x *ast.BinaryOperationExpr) (expr.Expr, error) {
	l, err := c.Compile(x.L)
	if err != nil {
		return nil, err
	}
	r, err := c.Compile(x.R)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
		return &expr.Logic{Typed: expr.Typed{T: expr.TBool}, Op: x.Op, L: l, R: r}, nil
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
		lr, lok := l.(*expr.Row)
		rr, rok := r.(*expr.Row)
		if lok || rok {
			if !lok || !rok || len(lr.Items) != len(rr.Items) {
				return nil, c.errf(sqlerr.ErrOperandColumns, "Operand should contain %d column(s)", expr.RowLen(l))
			}
			if x.Op != opcode.EQ && x.Op != opcode.NE {
				return nil, c.errf(sqlerr.ErrNotSupportedYet, "row comparison with %s", x.Op)
			}
			rs := [][]expr.Expr{rr.Items}
			return &expr.RowCmp{Typed: expr.Typed{T: expr.TBool}, L: lr.Items, Rs: rs, Not: x.Op == opcode.NE, Colls: c.rowCollations(lr.Items, rs)}, nil
		}
		if x.Op == opcode.EQ || x.Op == opcode.NE || x.Op == opcode.NullEQ {
			if expr.IsJSONType(l.Type()) && boolOperand(x.R, r) {
				l = expr.JSONBoolOperand(l)
			} else if expr.IsJSONType(r.Type()) && boolOperand(x.L, l) {
				r = expr.JSONBoolOperand(r)
			}
		}
		if expr.IsNumType(l.Type()) || expr.IsNumType(r.Type()) {
			// ENUM/SET compared with a number compare their index / bitmask.
			l, r = expr.NumericContext(l), expr.NumericContext(r)
		}
		return &expr.Cmp{Typed: expr.Typed{T: expr.TBool}, Op: x.Op, L: l, R: r, Coll: c.collationOf(l, r)}, nil
	case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
		l, r = expr.NumericContext(l), expr.NumericContext(r)
		return &expr.Arith{Typed: expr.Typed{T: expr.ArithType(x.Op, l.Type(), r.Type())}, Op: x.Op, L: l, R: r}, nil
	case opcode.And, opcode.Or, opcode.Xor, opcode.LeftShift, opcode.RightShift:
		l, r = expr.NumericContext(l), expr.NumericContext(r)
		return &expr.Bit{Typed: expr.Typed{T: expr.TUint}, Op: x.Op, L: l, R: r}, nil
	}
	return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported operator %s", x.Op)
}

// boolOperand reports whether an operand is a boolean in MySQL's sense (the TRUE and FALSE
// literals, a comparison or a logical operator): compared with a JSON document it becomes a JSON
// boolean, so `JSON_EXTRACT(j, '$.a') = TRUE` holds for {"a": true} (what SQLAlchemy's JSON Boolean
// accessor sends) and not for {"a": 1}.
func boolOperand(n ast.ExprNode, e expr.Expr) bool {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	if v, ok := n.(*driver.ValueExpr); ok {
		return v.Type.GetFlag()&mysql.IsBooleanFlag != 0
	}
	switch e.(type) {
	case *expr.Cmp, *expr.Logic:
		return true
	}
	return false
}

func (c *Compiler) in(x *ast.PatternInExpr) (expr.Expr, error) {
	e, err := c.Compile(x.Expr)
	if err != nil {
		return nil, err
	}
	if x.Sel != nil {
		sq, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported IN operand")
		}
		s, err := c.subquery(sq, expr.SubIn)
		if err != nil {
			return nil, err
		}
		in := s.(*expr.Subquery)
		in.Left = e
		in.Not = x.Not
		in.Coll = c.collationOf(e)
		return in, nil
	}
	list := make([]expr.Expr, len(x.List))
	for i, le := range x.List {
		if list[i], err = c.Compile(le); err != nil {
			return nil, err
		}
	}
	if r, ok := e.(*expr.Row); ok {
		rs := make([][]expr.Expr, len(list))
		for i, le := range list {
			lr, ok := le.(*expr.Row)
			if !ok || len(lr.Items) != len(r.Items) {
				return nil, c.errf(sqlerr.ErrOperandColumns, "Operand should contain %d column(s)", len(r.Items))
			}
			rs[i] = lr.Items
		}
		return &expr.RowCmp{Typed: expr.Typed{T: expr.TBool}, L: r.Items, Rs: rs, Not: x.Not, Colls: c.rowCollations(r.Items, rs)}, nil
	}
	in := &expr.In{Typed: expr.Typed{T: expr.TBool}, E: e, List: list, Not: x.Not, Coll: c.collationOf(append([]expr.Expr{e}, list...)...)}
	in.Ints, in.IntsNull, in.AllInts = expr.ConstIntSet(list)
	return in, nil
}

func (c *Compiler) caseExpr(x *ast.CaseExpr) (expr.Expr, error) {
	ce := &expr.Case{}
	var err error
	var all []expr.Expr
	if x.Value != nil {
		if ce.Value, err = c.Compile(x.Value); err != nil {
			return nil, err
		}
	}
	for _, w := range x.WhenClauses {
		we, err := c.Compile(w.Expr)
		if err != nil {
			return nil, err
		}
		te, err := c.Compile(w.Result)
		if err != nil {
			return nil, err
		}
		if ce.Value != nil && expr.IsJSONType(ce.Value.Type()) && boolOperand(w.Expr, we) {
			if ce.JSONBool == nil {
				ce.JSONBool = make([]bool, len(x.WhenClauses))
			}
			ce.JSONBool[len(ce.Whens)] = true
		}
		ce.Whens = append(ce.Whens, we)
		ce.Thens = append(ce.Thens, te)
		all = append(all, te)
	}
	if x.ElseClause != nil {
		if ce.Els, err = c.Compile(x.ElseClause); err != nil {
			return nil, err
		}
		all = append(all, ce.Els)
	}
	if ce.Value != nil {
		ce.Coll = c.collationOf(append([]expr.Expr{ce.Value}, ce.Whens...)...)
	}
	ce.T = expr.UnifyTypes(all...)
	return ce, nil
}

func (c *Compiler) cast(x *ast.FuncCastExpr) (expr.Expr, error) {
	e, err := c.Compile(x.Expr)
	if err != nil {
		return nil, err
	}
	ft := x.Tp
	t := types.ColType{Tp: ft.GetType(), Len: ft.GetFlen(), Frac: ft.GetDecimal(), Unsigned: mysql.HasUnsignedFlag(ft.GetFlag()), Charset: ft.GetCharset(), Collation: ft.GetCollate()}
	switch t.Tp {
	case mysql.TypeJSON:
		return expr.CastJSON(e), nil
	case mysql.TypeLonglong:
		if t.Unsigned {
			t = expr.TUint
		} else {
			t = expr.TInt
		}
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
		if ft.GetCharset() == "binary" || x.FunctionType == ast.CastBinaryOperator {
			t.Collation, t.Charset = "binary", "binary"
		} else {
			t.Collation, t.Charset = c.s.ConnCollation().Name, "utf8mb4"
		}
		t.Tp = mysql.TypeVarString
	case mysql.TypeNewDecimal:
		if t.Len <= 0 {
			t.Len = 10
		}
		if t.Frac < 0 {
			t.Frac = 0
		}
	}
	return &expr.Closure{Typed: expr.Typed{T: t}, Args: []expr.Expr{e}, Fn: func(env *expr.Env, row []types.Value, args []expr.Expr) (types.Value, error) {
		v, err := args[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return types.Null, err
		}
		return expr.CastValue(env, v, t)
	}}, nil
}

func (c *Compiler) variable(x *ast.VariableExpr) (expr.Expr, error) {
	name := strings.ToLower(x.Name)
	if !x.IsSystem {
		if x.Value != nil {
			val, err := c.Compile(x.Value)
			if err != nil {
				return nil, err
			}
			return &expr.Closure{Typed: expr.Typed{T: val.Type()}, Args: []expr.Expr{val}, Fn: func(env *expr.Env, row []types.Value, args []expr.Expr) (types.Value, error) {
				v, err := args[0].Eval(env, row)
				if err != nil {
					return v, err
				}
				// The variable outlives the row: its string may live in a buffer the next row
				// overwrites (exec's streaming reads).
				sv := v
				sv.S = strings.Clone(v.S)
				env.Sess.SetUserVar(name, sv)
				return v, nil
			}}, nil
		}
		t := expr.TString
		if v, ok := c.s.LookupUserVar(name); ok {
			t = expr.TypeOfValue(v)
		}
		return &expr.Closure{Typed: expr.Typed{T: t}, Fn: func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
			return env.Sess.UserVar(name), nil
		}}, nil
	}
	global := x.IsGlobal
	sv, ok := sysvar.Lookup(name)
	if !ok {
		return nil, c.errf(sqlerr.ErrUnknownSystemVar, "Unknown system variable '%s'", x.Name)
	}
	if x.ExplicitScope && !global && sv.Scope == sysvar.Global {
		return nil, c.errf(sqlerr.ErrIncorrectGlobalLocalVar, "Variable '%s' is a GLOBAL variable", x.Name)
	}
	t := expr.TypeOfValue(sv.Default)
	return &expr.Closure{Typed: expr.Typed{T: t}, Fn: func(env *expr.Env, _ []types.Value, _ []expr.Expr) (types.Value, error) {
		return env.Sess.SysVar(sv, global), nil
	}}, nil
}

// funcCall binds a function call: its arguments compiled, the parser's unit, TRIM direction and
// GET_FORMAT selector nodes read into the call, then the builtin registry (expr.BindBuiltin)
// checks the arity and builds the expression.
func (c *Compiler) funcCall(x *ast.FuncCallExpr) (expr.Expr, error) {
	call := &expr.Call{Name: x.FnName.L, Written: x.FnName.O, Args: make([]expr.Expr, 0, len(x.Args)),
		TrimLeading: true, TrimTrailing: true}
	for _, a := range x.Args {
		switch a := a.(type) {
		case *ast.TimeUnitExpr:
			if call.Unit == "" {
				call.Unit = strings.ToUpper(a.Unit.String())
			}
			continue
		case *ast.TrimDirectionExpr:
			call.TrimLeading = a.Direction != ast.TrimTrailing
			call.TrimTrailing = a.Direction != ast.TrimLeading
			continue
		case *ast.GetFormatSelectorExpr:
			call.FormatSelector = getFormatSelectors[a.Selector]
			continue
		}
		e, err := c.Compile(a)
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, e)
	}
	if n, ok := temporalLiterals[call.Name]; ok {
		call.Name = n
	}
	call.ConnCollation = c.s.ConnCollation()
	return expr.BindBuiltin(call)
}

// temporalLiterals are the parser's names of DATE 'x', TIME 'x' and TIMESTAMP 'x'.
var temporalLiterals = map[string]string{
	ast.DateLiteral: expr.LiteralDate, ast.TimeLiteral: expr.LiteralTime, ast.TimestampLiteral: expr.LiteralTimestamp,
}

// getFormatSelectors names GET_FORMAT's first argument for the registry's constructor.
var getFormatSelectors = map[ast.GetFormatSelectorType]string{
	ast.GetFormatSelectorDate: "DATE", ast.GetFormatSelectorTime: "TIME", ast.GetFormatSelectorDatetime: "DATETIME",
}

// collationOf is expr.CollationOf under the session's collation_connection.
func (c *Compiler) collationOf(es ...expr.Expr) *types.Collation {
	return expr.CollationOf(c.s.ConnCollation(), es...)
}

func (c *Compiler) subquery(x *ast.SubqueryExpr, kind expr.SubKind) (expr.Expr, error) {
	// Levels the subquery reads from this query count as read by the expression holding it, so
	// the condition is placed where those levels' rows exist.
	saved := c.sc.childRefs
	c.sc.childRefs = 0
	sp, err := c.planSub(c, x.Query)
	c.refs |= c.sc.childRefs
	c.sc.childRefs |= saved
	if err != nil {
		return nil, err
	}
	corr := sp.plan.Correlated
	if kind != expr.SubExists && sp.plan.NVisible != 1 {
		return nil, sqlerr.New(sqlerr.ErrOperandColumns, "Operand should contain 1 column(s)")
	}
	t := expr.TBool
	if kind == expr.SubScalar {
		t = sp.plan.Proj[0].Type()
	}
	return &expr.Subquery{Typed: expr.Typed{T: t}, Kind: kind, Plan: sp.plan, Correlated: corr}, nil
}

func (c *Compiler) compareSubquery(x *ast.CompareSubqueryExpr) (expr.Expr, error) {
	l, err := c.Compile(x.L)
	if err != nil {
		return nil, err
	}
	sq, ok := x.R.(*ast.SubqueryExpr)
	if !ok {
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported subquery comparison")
	}
	kind := expr.SubAny
	if x.All {
		kind = expr.SubAll
	}
	e, err := c.subquery(sq, kind)
	if err != nil {
		return nil, err
	}
	s := e.(*expr.Subquery)
	s.Left, s.Op, s.Coll = l, x.Op.String(), c.collationOf(l)
	s.T = expr.TBool
	return s, nil
}

// regexp binds x [NOT] REGEXP pattern (RLIKE); expr/regexp.go says how Kiln's matching differs
// from MySQL's ICU.
func (c *Compiler) regexp(x *ast.PatternRegexpExpr) (expr.Expr, error) {
	e, err := c.Compile(x.Expr)
	if err != nil {
		return nil, err
	}
	p, err := c.Compile(x.Pattern)
	if err != nil {
		return nil, err
	}
	not := x.Not
	ci := expr.RegexpCI(c.s.ConnCollation(), e, p)
	return &expr.Closure{Typed: expr.Typed{T: expr.TBool}, Args: []expr.Expr{e, p}, Fn: func(env *expr.Env, row []types.Value, args []expr.Expr) (types.Value, error) {
		v, err := args[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return types.Null, err
		}
		pv, err := args[1].Eval(env, row)
		if err != nil || pv.IsNull() {
			return types.Null, err
		}
		re, err := env.CompileRegexp(types.ToString(pv), ci, "", "regexp")
		if err != nil {
			return types.Null, err
		}
		return expr.BoolVal(re.MatchString(types.ToString(v)) != not), nil
	}}, nil
}

// subPlan is a planned subquery.
type subPlan struct {
	plan *exec.Select
}

// rowCollations is the collation each position of a row comparison compares strings in, decided
// as for a plain comparison of that position's operands (`(name, q) = ('A', 10)` compares name in
// its column's collation, as `name = 'A'` does).
func (c *Compiler) rowCollations(l []expr.Expr, rs [][]expr.Expr) []*types.Collation {
	colls := make([]*types.Collation, len(l))
	ops := make([]expr.Expr, 0, 1+len(rs))
	for i, e := range l {
		ops = append(ops[:0], e)
		for _, r := range rs {
			ops = append(ops, r[i])
		}
		colls[i] = c.collationOf(ops...)
	}
	return colls
}
