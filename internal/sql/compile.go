package sql

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// scopeCol is one column visible to name resolution.
type scopeCol struct {
	db, table, name string // table is the alias
	orgTable        string
	t               types.ColType
	col             *catalog.Column // nil for derived columns
	level           int             // FROM-list position that produces it
	notNull         bool
	used            bool // referenced by the query (covering-index decisions)
}

// scope is the row layout an expression is compiled against.
type scope struct {
	cols       []scopeCol
	parent     *scope // enclosing query (correlated subqueries)
	correlated bool   // some expression reads an enclosing query's row
	childRefs  uint64 // levels of this scope read by subqueries compiled since the last reset
}

func (s *scope) find(db, table, name string) (int, error) {
	found := -1
	for i := range s.cols {
		c := &s.cols[i]
		if !strings.EqualFold(c.name, name) {
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

// compiler turns AST expressions into Exprs over a scope.
type compiler struct {
	s  *Session
	sc *scope
	// Aggregation: when aggs is set, aggregate calls compile to references at aggBase+i.
	aggs     []*ast.AggregateFuncExpr
	aggTypes []types.ColType
	aggBase  int
	// aliases resolves names not found in the scope to select-list expressions (HAVING, ORDER BY).
	aliases func(name string) (Expr, bool)
	// aliasFirst, when set, says which names resolve to a select-list alias before a column of
	// the scope (HAVING: an alias wins unless the name is a GROUP BY column, as in MySQL).
	aliasFirst func(name string) bool
	// levels referenced by the last compiled expression (bit per FROM position).
	refs uint64
	// outer references made (correlated subquery).
	correlated bool
	params     *int // number of placeholders seen, shared across a statement
	// insertValues: the row VALUES(col) refers to in ON DUPLICATE KEY UPDATE.
	valuesRow func(name string) (Expr, error)
	planSub   func(c *compiler, sel ast.ResultSetNode) (*subPlan, error)
}

func (c *compiler) errf(code uint16, format string, args ...any) error {
	return sqlerr.New(code, format, args...)
}

func (c *compiler) compile(n ast.ExprNode) (Expr, error) {
	if err := c.s.enterExpr(); err != nil {
		return nil, err
	}
	defer c.s.leaveExpr()
	switch x := n.(type) {
	case *driver.ValueExpr:
		k := newConst(datumValue(&x.Datum))
		k.hex = x.Datum.Kind() == driver.KindBinaryLiteral
		return k, nil
	case *driver.ParamMarkerExpr:
		return &paramExpr{typed{tString}, x.Order}, nil
	case *ast.ParenthesesExpr:
		return c.compile(x.Expr)
	case *ast.ColumnNameExpr:
		return c.column(x.Name)
	case *ast.BinaryOperationExpr:
		return c.binary(x)
	case *ast.UnaryOperationExpr:
		e, err := c.compile(x.V)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case opcode.Minus:
			if k, ok := e.(*constExpr); ok && !k.v.IsNull() {
				v, err := types.Neg(k.v)
				if err == nil {
					return newConst(v), nil
				}
			}
			e = numericContext(e)
			return &negExpr{typed{numType(e.Type())}, e}, nil
		case opcode.Plus:
			return e, nil
		case opcode.Not, opcode.Not2:
			return &notExpr{typed{tBool}, e}, nil
		case opcode.BitNeg:
			return &bitNegExpr{typed{tUint}, e}, nil
		}
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported unary operator %s", x.Op)
	case *ast.IsNullExpr:
		e, err := c.compile(x.Expr)
		if err != nil {
			return nil, err
		}
		return &isNullExpr{typed{tBool}, e, x.Not}, nil
	case *ast.IsTruthExpr:
		e, err := c.compile(x.Expr)
		if err != nil {
			return nil, err
		}
		return &isTruthExpr{typed{tBool}, e, x.Not, x.True != 0}, nil
	case *ast.PatternInExpr:
		return c.in(x)
	case *ast.BetweenExpr:
		e, err := c.compile(x.Expr)
		if err != nil {
			return nil, err
		}
		lo, err := c.compile(x.Left)
		if err != nil {
			return nil, err
		}
		hi, err := c.compile(x.Right)
		if err != nil {
			return nil, err
		}
		return &betweenExpr{typed{tBool}, e, lo, hi, x.Not, c.collationOf(e, lo, hi)}, nil
	case *ast.PatternLikeOrIlikeExpr:
		e, err := c.compile(x.Expr)
		if err != nil {
			return nil, err
		}
		p, err := c.compile(x.Pattern)
		if err != nil {
			return nil, err
		}
		coll := c.collationOf(e, p)
		fold := !x.IsLike || (coll != nil && isCI(coll))
		return &likeExpr{typed{tBool}, e, p, x.Not, x.Escape, fold}, nil
	case *ast.FuncCallExpr:
		return c.funcCall(x)
	case *ast.AggregateFuncExpr:
		for i, a := range c.aggs {
			if a == x {
				return &colExpr{typed{c.aggTypes[i]}, c.aggBase + i, x.F}, nil
			}
		}
		return nil, c.errf(sqlerr.ErrInvalidGroupFuncUse, "Invalid use of group function")
	case *ast.CaseExpr:
		return c.caseExpr(x)
	case *ast.FuncCastExpr:
		return c.cast(x)
	case *ast.VariableExpr:
		return c.variable(x)
	case *ast.SubqueryExpr:
		return c.subquery(x, subScalar)
	case *ast.ExistsSubqueryExpr:
		sq, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported EXISTS operand")
		}
		e, err := c.subquery(sq, subExists)
		if err != nil {
			return nil, err
		}
		if x.Not {
			return &notExpr{typed{tBool}, e}, nil
		}
		return e, nil
	case *ast.CompareSubqueryExpr:
		return c.compareSubquery(x)
	case *ast.RowExpr:
		items := make([]Expr, len(x.Values))
		for i, v := range x.Values {
			e, err := c.compile(v)
			if err != nil {
				return nil, err
			}
			items[i] = e
		}
		return &rowExpr{typed{tNull}, items}, nil
	case *ast.ValuesExpr:
		if c.valuesRow == nil {
			return newConst(types.Null), nil
		}
		return c.valuesRow(x.Column.Name.Name.L)
	case *ast.DefaultExpr:
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "DEFAULT is only supported as an inserted value")
	case *ast.SetCollationExpr:
		e, err := c.compile(x.Expr)
		if err != nil {
			return nil, err
		}
		coll, ok := types.LookupCollation(strings.ToLower(x.Collate))
		if !ok {
			return nil, c.errf(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", x.Collate)
		}
		t := e.Type()
		if !isStringType(t) {
			return e, nil
		}
		t.Collation, t.Charset = coll.Name, coll.Charset
		return &collateExpr{typed{t}, e}, nil
	case *ast.TimeUnitExpr, *ast.TrimDirectionExpr:
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported expression")
	case *ast.PatternRegexpExpr:
		return c.regexp(x)
	}
	return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported expression %T", n)
}

// datumValue converts a parser literal to a Value.
func datumValue(d *driver.Datum) types.Value {
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

func numType(t types.ColType) types.ColType {
	switch t.Tp {
	case mysql.TypeNewDecimal, mysql.TypeDouble, mysql.TypeFloat:
		return t
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar, mysql.TypeBlob:
		return tDouble
	}
	return tInt
}

func (c *compiler) column(n *ast.ColumnName) (Expr, error) {
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
		col := &sc.cols[i]
		if depth == 0 {
			c.refs |= 1 << uint(col.level)
			col.used = true
			return &colExpr{typed{col.t}, i, col.name}, nil
		}
		c.correlated = true
		col.used = true
		for m := c.sc; m != sc; m = m.parent {
			m.correlated = true
		}
		sc.childRefs |= 1 << uint(col.level)
		return &outerColExpr{typed{col.t}, depth, i}, nil
	}
	full := name
	if tbl != "" {
		full = tbl + "." + name
	}
	return nil, c.errf(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", full)
}

// outerColExpr reads a column of an enclosing query's current row.
type outerColExpr struct {
	typed
	depth int
	idx   int
}

func (o *outerColExpr) Eval(env *Env, _ []types.Value) (types.Value, error) {
	n := len(env.outer) - o.depth
	if n < 0 || o.idx >= len(env.outer[n]) {
		return types.Null, nil
	}
	return env.outer[n][o.idx], nil
}

func (c *compiler) binary(x *ast.BinaryOperationExpr) (Expr, error) {
	l, err := c.compile(x.L)
	if err != nil {
		return nil, err
	}
	r, err := c.compile(x.R)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
		return &logicExpr{typed{tBool}, x.Op, l, r}, nil
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
		lr, lok := l.(*rowExpr)
		rr, rok := r.(*rowExpr)
		if lok || rok {
			if !lok || !rok || len(lr.items) != len(rr.items) {
				return nil, c.errf(sqlerr.ErrOperandColumns, "Operand should contain %d column(s)", rowLen(l))
			}
			if x.Op != opcode.EQ && x.Op != opcode.NE {
				return nil, c.errf(sqlerr.ErrNotSupportedYet, "row comparison with %s", x.Op)
			}
			return &rowCmpExpr{typed{tBool}, lr.items, [][]Expr{rr.items}, x.Op == opcode.NE, nil}, nil
		}
		if isNumType(l.Type()) || isNumType(r.Type()) {
			// ENUM/SET compared with a number compare their index / bitmask.
			l, r = numericContext(l), numericContext(r)
		}
		return &cmpExpr{typed{tBool}, x.Op, l, r, c.collationOf(l, r)}, nil
	case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
		l, r = numericContext(l), numericContext(r)
		return &arithExpr{typed{arithType(x.Op, l.Type(), r.Type())}, x.Op, l, r}, nil
	case opcode.And, opcode.Or, opcode.Xor, opcode.LeftShift, opcode.RightShift:
		l, r = numericContext(l), numericContext(r)
		return &bitExpr{typed{tUint}, x.Op, l, r}, nil
	}
	return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported operator %s", x.Op)
}

func isNumType(t types.ColType) bool {
	return isIntType(t) || t.Tp == mysql.TypeNewDecimal || t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat
}

// numericContext wraps an ENUM or SET operand so that it evaluates to its index or bitmask, as
// MySQL does wherever a number is expected; other operands are returned as they are.
func numericContext(e Expr) Expr {
	e = hexNumber(e)
	t := e.Type()
	if t.Tp != mysql.TypeEnum && t.Tp != mysql.TypeSet {
		return e
	}
	return &closureExpr{typed: typed{tUint}, args: []Expr{e}, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		v, err := a[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return v, err
		}
		if t.Tp == mysql.TypeEnum {
			return types.NewUint(uint64(types.EnumIndex(&t, v.S))), nil
		}
		return types.NewUint(types.SetMask(&t, v.S)), nil
	}}
}

func rowLen(e Expr) int {
	if r, ok := e.(*rowExpr); ok {
		return len(r.items)
	}
	return 1
}

func isIntType(t types.ColType) bool {
	switch t.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong, mysql.TypeYear, mysql.TypeBit:
		return true
	}
	return false
}

func arithType(op opcode.Op, l, r types.ColType) types.ColType {
	isDec := func(t types.ColType) bool { return t.Tp == mysql.TypeNewDecimal }
	isFloat := func(t types.ColType) bool {
		return t.Tp == mysql.TypeDouble || t.Tp == mysql.TypeFloat || (!isIntType(t) && !isDec(t) && t.Tp != mysql.TypeNull)
	}
	switch {
	case op == opcode.IntDiv:
		return tInt
	case isFloat(l) || isFloat(r):
		return tDouble
	case op == opcode.Div:
		t := tDecimal
		t.Frac = max(l.Frac, 0) + 4
		return t
	case isDec(l) || isDec(r):
		t := tDecimal
		if op == opcode.Mul {
			t.Frac = max(l.Frac, 0) + max(r.Frac, 0)
		} else {
			t.Frac = max(max(l.Frac, r.Frac), 0)
		}
		return t
	case l.Unsigned || r.Unsigned:
		return tUint
	}
	return tInt
}

// collationOf picks the collation for comparing operands: a column's collation wins over a literal's,
// as MySQL's coercibility rules say; binary if any side is binary.
func (c *compiler) collationOf(es ...Expr) *types.Collation {
	var best *types.Collation
	for _, e := range es {
		if ce, ok := e.(*collateExpr); ok {
			if coll, ok := types.LookupCollation(ce.t.Collation); ok {
				return coll
			}
		}
	}
	for _, e := range es {
		t := e.Type()
		if t.Collation == "binary" && isStringType(t) {
			coll, _ := types.LookupCollation("binary")
			return coll
		}
		if _, ok := e.(*colExpr); ok && isStringType(t) && t.Collation != "" {
			coll, ok := types.LookupCollation(t.Collation)
			if ok {
				best = coll
			}
		}
	}
	if best != nil {
		return best
	}
	return c.s.connCollation()
}

func isStringType(t types.ColType) bool {
	switch t.Tp {
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar, mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob,
		mysql.TypeEnum, mysql.TypeSet:
		return true
	}
	return false
}

func isCI(c *types.Collation) bool { return strings.HasSuffix(c.Name, "_ci") }

func (c *compiler) in(x *ast.PatternInExpr) (Expr, error) {
	e, err := c.compile(x.Expr)
	if err != nil {
		return nil, err
	}
	if x.Sel != nil {
		sq, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported IN operand")
		}
		s, err := c.subquery(sq, subIn)
		if err != nil {
			return nil, err
		}
		in := s.(*subqueryExpr)
		in.left = e
		in.not = x.Not
		in.coll = c.collationOf(e)
		return in, nil
	}
	list := make([]Expr, len(x.List))
	for i, le := range x.List {
		if list[i], err = c.compile(le); err != nil {
			return nil, err
		}
	}
	if r, ok := e.(*rowExpr); ok {
		rs := make([][]Expr, len(list))
		for i, le := range list {
			lr, ok := le.(*rowExpr)
			if !ok || len(lr.items) != len(r.items) {
				return nil, c.errf(sqlerr.ErrOperandColumns, "Operand should contain %d column(s)", len(r.items))
			}
			rs[i] = lr.items
		}
		return &rowCmpExpr{typed{tBool}, r.items, rs, x.Not, nil}, nil
	}
	in := &inExpr{typed: typed{tBool}, e: e, list: list, not: x.Not, coll: c.collationOf(append([]Expr{e}, list...)...)}
	in.ints, in.intsNull, in.allInts = constIntSet(list)
	return in, nil
}

func (c *compiler) caseExpr(x *ast.CaseExpr) (Expr, error) {
	ce := &caseExpr{}
	var err error
	var all []Expr
	if x.Value != nil {
		if ce.value, err = c.compile(x.Value); err != nil {
			return nil, err
		}
	}
	for _, w := range x.WhenClauses {
		we, err := c.compile(w.Expr)
		if err != nil {
			return nil, err
		}
		te, err := c.compile(w.Result)
		if err != nil {
			return nil, err
		}
		ce.whens = append(ce.whens, we)
		ce.thens = append(ce.thens, te)
		all = append(all, te)
	}
	if x.ElseClause != nil {
		if ce.els, err = c.compile(x.ElseClause); err != nil {
			return nil, err
		}
		all = append(all, ce.els)
	}
	if ce.value != nil {
		ce.coll = c.collationOf(append([]Expr{ce.value}, ce.whens...)...)
	}
	ce.t = unifyTypes(all...)
	return ce, nil
}

// unifyTypes is the result type of IF/CASE/COALESCE branches.
func unifyTypes(es ...Expr) types.ColType {
	res := tNull
	for _, e := range es {
		t := e.Type()
		if t.Tp == mysql.TypeNull {
			continue
		}
		if res.Tp == mysql.TypeNull {
			res = t
			continue
		}
		switch {
		case isStringType(res) || isStringType(t):
			if res.Collation == "binary" && isStringType(res) || t.Collation == "binary" && isStringType(t) {
				res = tBytes
			} else {
				res = tString
			}
		case res.Tp == t.Tp:
			if t.Frac > res.Frac {
				res.Frac = t.Frac
			}
		case res.Tp == mysql.TypeDouble || t.Tp == mysql.TypeDouble || res.Tp == mysql.TypeFloat || t.Tp == mysql.TypeFloat:
			res = tDouble
		case res.Tp == mysql.TypeNewDecimal || t.Tp == mysql.TypeNewDecimal:
			d := tDecimal
			d.Frac = max(res.Frac, t.Frac, 0)
			res = d
		case isIntType(res) && isIntType(t):
			res = tInt
		default:
			res = tString
		}
	}
	return res
}

func (c *compiler) cast(x *ast.FuncCastExpr) (Expr, error) {
	e, err := c.compile(x.Expr)
	if err != nil {
		return nil, err
	}
	ft := x.Tp
	t := types.ColType{Tp: ft.GetType(), Len: ft.GetFlen(), Frac: ft.GetDecimal(), Unsigned: mysql.HasUnsignedFlag(ft.GetFlag()), Charset: ft.GetCharset(), Collation: ft.GetCollate()}
	switch t.Tp {
	case mysql.TypeJSON:
		return castJSON(e), nil
	case mysql.TypeLonglong:
		if t.Unsigned {
			t = tUint
		} else {
			t = tInt
		}
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
		if ft.GetCharset() == "binary" || x.FunctionType == ast.CastBinaryOperator {
			t.Collation, t.Charset = "binary", "binary"
		} else {
			t.Collation, t.Charset = c.s.connCollation().Name, "utf8mb4"
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
	return &closureExpr{typed: typed{t}, args: []Expr{e}, fn: func(env *Env, row []types.Value, args []Expr) (types.Value, error) {
		v, err := args[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return types.Null, err
		}
		return castValue(env, v, t)
	}}, nil
}

// castValue is CAST(v AS t): never an error for bad data, a warning and the best value instead.
func castValue(env *Env, v types.Value, t types.ColType) (types.Value, error) {
	switch t.Tp {
	case mysql.TypeLonglong:
		if t.Unsigned {
			if v.K == types.KindInt {
				return types.NewUint(uint64(v.I)), nil
			}
			if v.K == types.KindUint {
				return v, nil
			}
			f := types.ToFloat(v)
			if f < 0 {
				return types.NewUint(uint64(toIntLenient(v))), nil
			}
			return types.NewUint(toUint64(v)), nil
		}
		if v.K == types.KindUint {
			return types.NewInt(int64(v.U())), nil
		}
		return types.NewInt(toIntLenient(v)), nil
	case mysql.TypeDouble, mysql.TypeFloat:
		return types.NewFloat(types.ToFloat(v)), nil
	case mysql.TypeVarString:
		s := types.ToString(v)
		if t.Len > 0 && len([]rune(s)) > t.Len {
			s = string([]rune(s)[:t.Len])
		}
		if t.Collation == "binary" {
			return types.NewBytes(s), nil
		}
		return types.NewString(s), nil
	}
	out, _, err := types.Convert(v, &t, types.ConvertCtx{Strict: false})
	if err != nil {
		env.warn(sqlerr.As(err))
		return types.Null, nil
	}
	return out, nil
}

func (c *compiler) variable(x *ast.VariableExpr) (Expr, error) {
	name := strings.ToLower(x.Name)
	if !x.IsSystem {
		if x.Value != nil {
			val, err := c.compile(x.Value)
			if err != nil {
				return nil, err
			}
			return &closureExpr{typed: typed{val.Type()}, args: []Expr{val}, fn: func(env *Env, row []types.Value, args []Expr) (types.Value, error) {
				v, err := args[0].Eval(env, row)
				if err != nil {
					return v, err
				}
				env.s.SetUserVar(name, v)
				return v, nil
			}}, nil
		}
		t := tString
		if v, ok := c.s.userVars[name]; ok {
			t = typeOfValue(v)
		}
		return &closureExpr{typed: typed{t}, fn: func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return env.s.UserVar(name), nil
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
	t := typeOfValue(sv.Default)
	return &closureExpr{typed: typed{t}, fn: func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
		return env.s.SysVar(sv, global), nil
	}}, nil
}

// funcCall compiles function calls: control flow and session functions here, pure ones from types.
func (c *compiler) funcCall(x *ast.FuncCallExpr) (Expr, error) {
	name := x.FnName.L
	args := make([]Expr, 0, len(x.Args))
	for _, a := range x.Args {
		switch a.(type) {
		case *ast.TimeUnitExpr, *ast.TrimDirectionExpr, *ast.GetFormatSelectorExpr:
			continue
		}
		e, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	argc := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
		}
		return nil
	}
	mk := func(t types.ColType, fn func(env *Env, row []types.Value, args []Expr) (types.Value, error)) (Expr, error) {
		return &closureExpr{typed: typed{t}, args: args, fn: fn}, nil
	}
	switch name {
	case "if":
		if err := argc(3, 3); err != nil {
			return nil, err
		}
		t := unifyTypes(args[1], args[2])
		return mk(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			b, null := types.ToBool(v)
			var r types.Value
			if b && !null {
				r, err = a[1].Eval(env, row)
			} else {
				r, err = a[2].Eval(env, row)
			}
			return coerceTo(r, t), err
		})
	case "ifnull", "coalesce":
		if name == "ifnull" {
			if err := argc(2, 2); err != nil {
				return nil, err
			}
		} else if err := argc(1, 1<<20); err != nil {
			return nil, err
		}
		t := unifyTypes(args...)
		return mk(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			for _, e := range a {
				v, err := e.Eval(env, row)
				if err != nil || !v.IsNull() {
					return coerceTo(v, t), err
				}
			}
			return types.Null, nil
		})
	case "nullif":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		coll := c.collationOf(args...)
		return mk(args[0].Type(), func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return v, err
			}
			w, err := a[1].Eval(env, row)
			if err != nil {
				return w, err
			}
			if !w.IsNull() && types.Compare(v, w, coll) == 0 {
				return types.Null, nil
			}
			return v, nil
		})
	case "isnull":
		if err := argc(1, 1); err != nil {
			return nil, err
		}
		return &isNullExpr{typed{tBool}, args[0], false}, nil
	case "now", "current_timestamp", "localtime", "localtimestamp", "sysdate":
		fsp := c.constIntArg(args, 0)
		t := tDT
		t.Frac = fsp
		return mk(t, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return timeValue(env.now(), fsp), nil
		})
	case "curdate", "current_date":
		return mk(tDate, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			n := env.now()
			return types.NewDate(types.PackTime(n.Year(), int(n.Month()), n.Day(), 0, 0, 0, 0)), nil
		})
	case "unix_timestamp":
		if len(args) == 0 {
			return mk(tInt, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
				return types.NewInt(env.now().Unix()), nil
			})
		}
		// A fractional argument gives a DECIMAL with its digits (UNIX_TIMESTAMP('... 00:00:00.5')).
		fsp := exprFsp(args[0])
		if t := args[0].Type(); isIntType(t) || t.Tp == mysql.TypeNewDecimal {
			fsp = min(max(t.Frac, 0), 6)
			if isIntType(t) {
				fsp = 0
			}
		}
		t := tInt
		if fsp > 0 {
			t = tDecimal
			t.Frac = fsp
		}
		return mk(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			dt := tDT
			dt.Frac = fsp
			tv, _, err := types.Convert(v, &dt, types.ConvertCtx{})
			if err != nil {
				return types.NewInt(0), nil
			}
			y, mo, d, h, mi, s, us := types.UnpackTime(tv.I)
			sec := time.Date(y, time.Month(mo), d, h, mi, s, 0, env.s.Location()).Unix()
			if sec < 0 || sec > maxUnixTime {
				sec, us = 0, 0
			}
			if fsp == 0 {
				return types.NewInt(sec), nil
			}
			return types.NewDecimal(decimal.New(sec*1e6+int64(us), -6), fsp), nil
		})
	case "database", "schema":
		return mk(tString, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			if env.s.CurrentDB() == "" {
				return types.Null, nil
			}
			return types.NewString(env.s.CurrentDB()), nil
		})
	case "version":
		return mk(tString, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(env.s.ServerVersion()), nil
		})
	case "connection_id":
		return mk(tUint, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewUint(uint64(env.s.ConnectionID())), nil
		})
	case "user", "session_user", "system_user":
		return mk(tString, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(env.s.LoginUser()), nil
		})
	case "current_user":
		// The account the login matched (its host pattern), not the login itself.
		return mk(tString, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(env.s.CurrentUser()), nil
		})
	case "last_insert_id":
		if len(args) == 1 {
			return mk(tUint, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
				v, err := a[0].Eval(env, row)
				if err != nil || v.IsNull() {
					return v, err
				}
				env.s.SetLastInsertID(toUint64(v))
				return types.NewUint(env.s.LastInsertID()), nil
			})
		}
		return mk(tUint, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewUint(env.s.LastInsertID()), nil
		})
	case "row_count":
		return mk(tInt, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewInt(env.s.RowCount()), nil
		})
	case "found_rows":
		return mk(tInt, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewInt(env.s.FoundRows()), nil
		})
	case "rand":
		return mk(tDouble, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewFloat(rand.Float64()), nil
		})
	case "uuid":
		return mk(tString, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(newUUID()), nil
		})
	case "sleep":
		return mk(tInt, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil {
				return v, err
			}
			d := time.Duration(types.ToFloat(v) * float64(time.Second))
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return types.NewInt(0), nil
			case <-env.ctx.Done():
				return types.NewInt(1), nil
			}
		})
	case "date_add", "adddate", "date_sub", "subdate":
		return c.dateArith(x, args, name == "date_sub" || name == "subdate")
	}
	if e, ok, err := c.moreFunc(x, name, args); ok {
		return e, err
	}
	if e, ok, err := c.jsonFunc(name, args); ok {
		return e, err
	}
	var coll *types.Collation
	if builtins.FuncUsesCollation(name) {
		coll = c.collationOf(args...)
	}
	f, lo, hi, ok := builtins.LookupFuncCollation(name, coll)
	if !ok {
		return nil, c.errf(sqlerr.ErrSpDoesNotExist, "FUNCTION %s does not exist", x.FnName.O)
	}
	if len(args) < lo || (hi >= 0 && len(args) > hi) {
		return nil, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
	}
	fe := newFuncExpr(funcType(name, args), name, f, args)
	return fe, nil
}

func (c *compiler) dateArith(x *ast.FuncCallExpr, args []Expr, sub bool) (Expr, error) {
	if len(x.Args) != 3 || len(args) != 2 {
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported %s form", x.FnName.O)
	}
	tu, ok := x.Args[2].(*ast.TimeUnitExpr)
	if !ok {
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported %s unit", x.FnName.O)
	}
	unit := strings.ToUpper(tu.Unit.String())
	return &closureExpr{typed: typed{tDT}, args: args, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		d, err := a[0].Eval(env, row)
		if err != nil || d.IsNull() {
			return types.Null, err
		}
		n, err := a[1].Eval(env, row)
		if err != nil || n.IsNull() {
			return types.Null, err
		}
		return addInterval(d, n, unit, sub)
	}}, nil
}

func (c *compiler) constIntArg(args []Expr, i int) int {
	if i < len(args) {
		if k, ok := args[i].(*constExpr); ok {
			return int(toIntLenient(k.v))
		}
	}
	return 0
}

func timeValue(t time.Time, fsp int) types.Value {
	micro := t.Nanosecond() / 1000
	if fsp < 6 {
		div := 1
		for i := fsp; i < 6; i++ {
			div *= 10
		}
		micro = micro / div * div
	}
	return types.NewDatetime(types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), micro), fsp)
}

// funcType is the static result type of a pure builtin.
func funcType(name string, args []Expr) types.ColType {
	switch name {
	case "length", "octet_length", "char_length", "character_length", "instr", "locate", "position",
		"ascii", "strcmp", "sign", "year", "month", "day", "dayofmonth", "hour", "minute", "second",
		"dayofweek", "dayofyear", "weekday", "datediff", "to_days", "bit_length", "week", "quarter",
		"microsecond", "ord", "field", "find_in_set", "bit_count", "interval", "time_to_sec", "period_add",
		"period_diff", "to_seconds", "weekofyear", "yearweek", "is_ipv4", "is_ipv6", "is_ipv4_compat",
		"is_ipv4_mapped", "is_uuid":
		return tInt
	case "crc32", "inet_aton":
		return tUint
	case "abs", "mod":
		if len(args) > 0 {
			return numType(args[0].Type())
		}
	case "round", "truncate", "floor", "ceil", "ceiling":
		if len(args) > 0 {
			t := numType(args[0].Type())
			if name == "floor" || name == "ceil" || name == "ceiling" {
				if t.Tp == mysql.TypeNewDecimal || isIntType(t) {
					return tInt
				}
			}
			if t.Tp == mysql.TypeNewDecimal && len(args) > 1 {
				if k, ok := args[1].(*constExpr); ok {
					t.Frac = max(int(toIntLenient(k.v)), 0)
				}
			} else if t.Tp == mysql.TypeNewDecimal {
				t.Frac = 0
			}
			return t
		}
	case "sqrt", "pow", "power", "exp", "ln", "log", "log2", "log10", "pi", "sin", "cos", "tan", "rand", "radians",
		"degrees", "atan", "atan2", "asin", "acos", "cot":
		return tDouble
	case "greatest", "least":
		return unifyTypes(args...)
	case "date", "last_day", "makedate", "from_days":
		return tDate
	case "time":
		t := tTime
		t.Frac = exprFsp(args[0])
		return t
	case "sec_to_time":
		t := tTime
		t.Frac = numFsp(args[0])
		return t
	case "maketime":
		t := tTime
		t.Frac = numFsp(args[2])
		return t
	case "timediff":
		t := tTime
		t.Frac = max(exprFsp(args[0]), exprFsp(args[1]))
		return t
	case "timestamp":
		t := tDT
		t.Frac = exprFsp(args[0])
		if len(args) > 1 {
			t.Frac = max(t.Frac, exprFsp(args[1]))
		}
		return t
	case "addtime", "subtime":
		fsp := max(exprFsp(args[0]), exprFsp(args[1]))
		switch args[0].Type().Tp {
		case mysql.TypeDuration:
			t := tTime
			t.Frac = fsp
			return t
		case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDate:
			t := tDT
			t.Frac = fsp
			return t
		}
		return tString
	case "char_func", "from_base64", "inet6_aton", "uuid_to_bin", "unhex":
		return tBytes
	case "hex", "md5", "sha1", "sha", "sha2", "inet6_ntoa", "inet_ntoa", "bin_to_uuid", "to_base64", "conv", "bin",
		"oct", "format", "date_format", "time_format", "dayname", "monthname":
		return tString
	}
	if len(args) > 0 {
		for _, a := range args {
			if a.Type().Collation == "binary" && isStringType(a.Type()) {
				return tBytes
			}
		}
	}
	return tString
}

func (c *compiler) subquery(x *ast.SubqueryExpr, kind subKind) (Expr, error) {
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
	corr := sp.plan.correlated
	if kind != subExists && sp.plan.nVisible != 1 {
		return nil, sqlerr.New(sqlerr.ErrOperandColumns, "Operand should contain 1 column(s)")
	}
	t := tBool
	if kind == subScalar {
		t = sp.plan.proj[0].Type()
	}
	return &subqueryExpr{typed: typed{t}, kind: kind, plan: sp.plan, correlated: corr}, nil
}

func (c *compiler) compareSubquery(x *ast.CompareSubqueryExpr) (Expr, error) {
	l, err := c.compile(x.L)
	if err != nil {
		return nil, err
	}
	sq, ok := x.R.(*ast.SubqueryExpr)
	if !ok {
		return nil, c.errf(sqlerr.ErrNotSupportedYet, "unsupported subquery comparison")
	}
	kind := subAny
	if x.All {
		kind = subAll
	}
	e, err := c.subquery(sq, kind)
	if err != nil {
		return nil, err
	}
	s := e.(*subqueryExpr)
	s.left, s.op, s.coll = l, x.Op.String(), c.collationOf(l)
	s.t = tBool
	return s, nil
}

func opFromString(s string) opcode.Op {
	for _, op := range []opcode.Op{opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE} {
		if op.String() == s {
			return op
		}
	}
	return opcode.EQ
}
