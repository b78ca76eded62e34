package sql

import (
	"math"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Expr is a compiled expression, evaluated against one row of its scope.
type Expr interface {
	Eval(env *Env, row []types.Value) (types.Value, error)
	Type() types.ColType
}

// typed carries an expression's static result type.
type typed struct{ t types.ColType }

func (t typed) Type() types.ColType { return t.t }

var (
	tInt     = types.ColType{Tp: mysql.TypeLonglong, Len: 21, Collation: "binary"}
	tUint    = types.ColType{Tp: mysql.TypeLonglong, Unsigned: true, Len: 20, Collation: "binary"}
	tDouble  = types.ColType{Tp: mysql.TypeDouble, Len: 22, Frac: -1, Collation: "binary"}
	tDecimal = types.ColType{Tp: mysql.TypeNewDecimal, Len: 65, Frac: 4, Collation: "binary"}
	tString  = types.ColType{Tp: mysql.TypeVarString, Len: 255, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	tBytes   = types.ColType{Tp: mysql.TypeVarString, Len: 255, Charset: "binary", Collation: "binary"}
	tNull    = types.ColType{Tp: mysql.TypeNull, Collation: "binary"}
	tBool    = types.ColType{Tp: mysql.TypeLonglong, Len: 1, Collation: "binary"}
	tDate    = types.ColType{Tp: mysql.TypeDate, Len: 10, Collation: "binary"}
	tDT      = types.ColType{Tp: mysql.TypeDatetime, Len: 19, Collation: "binary"}
	tTime    = types.ColType{Tp: mysql.TypeDuration, Len: 10, Collation: "binary"}
)

// typeOfValue is the static type of a literal.
func typeOfValue(v types.Value) types.ColType {
	switch v.K {
	case types.KindInt:
		return tInt
	case types.KindUint:
		return tUint
	case types.KindFloat:
		return tDouble
	case types.KindDecimal:
		t := tDecimal
		t.Frac = int(v.Frac)
		return t
	case types.KindString:
		return tString
	case types.KindBytes:
		return tBytes
	case types.KindDate:
		return tDate
	case types.KindDatetime:
		t := tDT
		t.Frac = int(v.Frac)
		return t
	case types.KindDuration:
		return tTime
	}
	return tNull
}

// constExpr is a literal.
type constExpr struct {
	typed
	v   types.Value
	hex bool // a hexadecimal or bit literal: a number in numeric context
}

func (c *constExpr) Eval(*Env, []types.Value) (types.Value, error) { return c.v, nil }

func newConst(v types.Value) *constExpr { return &constExpr{typed: typed{typeOfValue(v)}, v: v} }

// hexNumber is the value of a hex or bit literal in numeric context: its bytes as a big-endian
// BIGINT UNSIGNED (e stays as it is otherwise).
func hexNumber(e Expr) Expr {
	k, ok := e.(*constExpr)
	if !ok || !k.hex {
		return e
	}
	var u uint64
	for i := 0; i < len(k.v.S); i++ {
		u = u<<8 | uint64(k.v.S[i])
	}
	return newConst(types.NewUint(u))
}

// colExpr reads a column of the row.
type colExpr struct {
	typed
	idx  int
	name string
}

func (c *colExpr) Eval(_ *Env, row []types.Value) (types.Value, error) { return row[c.idx], nil }

// paramExpr reads a placeholder's bound value.
type paramExpr struct {
	typed
	idx int
}

func (p *paramExpr) Eval(env *Env, _ []types.Value) (types.Value, error) {
	if p.idx >= len(env.params) {
		return types.Null, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to EXECUTE")
	}
	return env.params[p.idx], nil
}

// arithExpr is + - * / DIV %.
type arithExpr struct {
	typed
	op   opcode.Op
	l, r Expr
}

func (a *arithExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := a.l.Eval(env, row)
	if err != nil || l.IsNull() {
		return types.Null, err
	}
	r, err := a.r.Eval(env, row)
	if err != nil || r.IsNull() {
		return types.Null, err
	}
	var v types.Value
	switch a.op {
	case opcode.Plus:
		v, err = types.Add(l, r)
	case opcode.Minus:
		v, err = types.Sub(l, r)
	case opcode.Mul:
		v, err = types.Mul(l, r)
	case opcode.Div:
		v, err = types.Div(l, r)
		if err == nil && v.IsNull() {
			err = env.divByZero()
		}
	case opcode.IntDiv:
		v, err = types.IntDiv(l, r)
		if err == nil && v.IsNull() {
			err = env.divByZero()
		}
	case opcode.Mod:
		v, err = types.Mod(l, r)
		if err == nil && v.IsNull() {
			err = env.divByZero()
		}
	}
	return v, err
}

// bitExpr is & | ^ << >>, on unsigned 64-bit integers as MySQL does.
type bitExpr struct {
	typed
	op   opcode.Op
	l, r Expr
}

func (b *bitExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := b.l.Eval(env, row)
	if err != nil || l.IsNull() {
		return types.Null, err
	}
	r, err := b.r.Eval(env, row)
	if err != nil || r.IsNull() {
		return types.Null, err
	}
	x, y := toUint64(l), toUint64(r)
	switch b.op {
	case opcode.And:
		return types.NewUint(x & y), nil
	case opcode.Or:
		return types.NewUint(x | y), nil
	case opcode.Xor:
		return types.NewUint(x ^ y), nil
	case opcode.LeftShift:
		if y >= 64 {
			return types.NewUint(0), nil
		}
		return types.NewUint(x << y), nil
	case opcode.RightShift:
		if y >= 64 {
			return types.NewUint(0), nil
		}
		return types.NewUint(x >> y), nil
	}
	return types.Null, nil
}

func toUint64(v types.Value) uint64 {
	switch v.K {
	case types.KindUint:
		return v.U()
	case types.KindInt:
		return uint64(v.I)
	}
	f := math.Round(types.ToFloat(v))
	if f < 0 {
		return uint64(int64(f))
	}
	if f >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(f)
}

// cmpExpr is = <> < <= > >= <=>.
type cmpExpr struct {
	typed
	op   opcode.Op
	l, r Expr
	coll *types.Collation
}

func (c *cmpExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := c.l.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	r, err := c.r.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	if l.IsNull() || r.IsNull() {
		if c.op == opcode.NullEQ {
			return boolVal(l.IsNull() && r.IsNull()), nil
		}
		return types.Null, nil
	}
	n := types.Compare(l, r, c.coll)
	return boolVal(cmpResult(c.op, n)), nil
}

func cmpResult(op opcode.Op, n int) bool {
	switch op {
	case opcode.EQ, opcode.NullEQ:
		return n == 0
	case opcode.NE:
		return n != 0
	case opcode.LT:
		return n < 0
	case opcode.LE:
		return n <= 0
	case opcode.GT:
		return n > 0
	case opcode.GE:
		return n >= 0
	}
	return false
}

var (
	vTrue  = types.NewInt(1)
	vFalse = types.NewInt(0)
)

func boolVal(b bool) types.Value {
	if b {
		return vTrue
	}
	return vFalse
}

// logicExpr is AND, OR, XOR with SQL's three-valued logic.
type logicExpr struct {
	typed
	op   opcode.Op
	l, r Expr
}

func (e *logicExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := e.l.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	lb, lnull := types.ToBool(l)
	switch e.op {
	case opcode.LogicAnd:
		if !lnull && !lb {
			return vFalse, nil
		}
	case opcode.LogicOr:
		if !lnull && lb {
			return vTrue, nil
		}
	}
	r, err := e.r.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	rb, rnull := types.ToBool(r)
	switch e.op {
	case opcode.LogicAnd:
		if !rnull && !rb {
			return vFalse, nil
		}
		if lnull || rnull {
			return types.Null, nil
		}
		return vTrue, nil
	case opcode.LogicOr:
		if !rnull && rb {
			return vTrue, nil
		}
		if lnull || rnull {
			return types.Null, nil
		}
		return vFalse, nil
	default: // XOR
		if lnull || rnull {
			return types.Null, nil
		}
		return boolVal(lb != rb), nil
	}
}

// notExpr is NOT / !.
type notExpr struct {
	typed
	e Expr
}

func (n *notExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	b, null := types.ToBool(v)
	if null {
		return types.Null, nil
	}
	return boolVal(!b), nil
}

// negExpr is unary minus; bitNegExpr is ~.
type negExpr struct {
	typed
	e Expr
}

func (n *negExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	return types.Neg(v)
}

type bitNegExpr struct {
	typed
	e Expr
}

func (n *bitNegExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	return types.NewUint(^toUint64(v)), nil
}

// isNullExpr is IS [NOT] NULL.
type isNullExpr struct {
	typed
	e   Expr
	not bool
}

func (n *isNullExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	return boolVal(v.IsNull() != n.not), nil
}

// isTruthExpr is IS [NOT] TRUE/FALSE.
type isTruthExpr struct {
	typed
	e    Expr
	not  bool
	true bool
}

func (n *isTruthExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	b, null := types.ToBool(v)
	res := !null && b == n.true
	return boolVal(res != n.not), nil
}

// inExpr is x [NOT] IN (list).
type inExpr struct {
	typed
	e    Expr
	list []Expr
	not  bool
	coll *types.Collation
	// A list of integer literals (and NULLs) is also kept sorted, so an integer operand is found by
	// binary search rather than compared with every element (a list of a million ids would cost a
	// million comparisons per row).
	ints     []int64
	intsNull bool // the list holds a NULL
	allInts  bool
}

// constIntSet returns the sorted integer literals of list when every element is an integer literal
// or NULL.
func constIntSet(list []Expr) (ints []int64, hasNull, ok bool) {
	if len(list) < 8 {
		return nil, false, false // a short list is scanned as fast
	}
	ints = make([]int64, 0, len(list))
	for _, e := range list {
		k, isConst := e.(*constExpr)
		switch {
		case !isConst || k.hex:
			return nil, false, false
		case k.v.K == types.KindNull:
			hasNull = true
		case k.v.K == types.KindInt:
			ints = append(ints, k.v.I)
		default:
			return nil, false, false
		}
	}
	slices.Sort(ints)
	return slices.Compact(ints), hasNull, true
}

func (n *inExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	if n.allInts && (v.K == types.KindInt || v.K == types.KindUint) {
		// Integers compare exactly: a KindUint past MaxInt64 equals no literal of the list.
		_, found := slices.BinarySearch(n.ints, v.I)
		found = found && (v.K == types.KindInt || v.I >= 0)
		switch {
		case found:
			return boolVal(!n.not), nil
		case n.intsNull:
			return types.Null, nil
		}
		return boolVal(n.not), nil
	}
	sawNull := false
	for i, le := range n.list {
		// A list of a million values is a long loop for each row.
		if i&1023 == 1023 {
			if err := env.interrupted(); err != nil {
				return types.Null, err
			}
		}
		x, err := le.Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		if x.IsNull() {
			sawNull = true
			continue
		}
		if types.Compare(v, x, n.coll) == 0 {
			return boolVal(!n.not), nil
		}
	}
	if sawNull {
		return types.Null, nil
	}
	return boolVal(n.not), nil
}

// betweenExpr is x [NOT] BETWEEN a AND b.
type betweenExpr struct {
	typed
	e, lo, hi Expr
	not       bool
	coll      *types.Collation
}

func (n *betweenExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	lo, err := n.lo.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	hi, err := n.hi.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	if v.IsNull() {
		return types.Null, nil
	}
	// NULL bounds: the result is NULL unless the other bound already decides it (false).
	var geLo, leHi types.Value
	if lo.IsNull() {
		geLo = types.Null
	} else {
		geLo = boolVal(types.Compare(v, lo, n.coll) >= 0)
	}
	if hi.IsNull() {
		leHi = types.Null
	} else {
		leHi = boolVal(types.Compare(v, hi, n.coll) <= 0)
	}
	var res types.Value
	switch {
	case (!geLo.IsNull() && geLo.I == 0) || (!leHi.IsNull() && leHi.I == 0):
		res = vFalse
	case geLo.IsNull() || leHi.IsNull():
		return types.Null, nil
	default:
		res = vTrue
	}
	if n.not {
		return boolVal(res.I == 0), nil
	}
	return res, nil
}

// likeExpr is x [NOT] LIKE pattern [ESCAPE c].
type likeExpr struct {
	typed
	e, pat Expr
	not    bool
	escape byte
	fold   bool // case-insensitive collation
}

func (n *likeExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.e.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	p, err := n.pat.Eval(env, row)
	if err != nil || p.IsNull() {
		return types.Null, err
	}
	s, ps := types.ToString(v), types.ToString(p)
	if n.fold {
		s, ps = strings.ToLower(s), strings.ToLower(ps)
	}
	return boolVal(types.LikeRunes([]rune(s), []rune(ps), rune(n.escape)) != n.not), nil
}

// funcExpr calls a pure builtin from internal/sql/types.
type funcExpr struct {
	typed
	name string
	f    builtins.Func
	args []Expr
	size builtins.SizeFunc // the result's length before it is built (nil: checked after)
}

func newFuncExpr(t types.ColType, name string, f builtins.Func, args []Expr) *funcExpr {
	return &funcExpr{typed: typed{t}, name: name, f: f, args: args, size: builtins.LookupFuncSize(name)}
}

func (f *funcExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	var buf [4]types.Value
	args := buf[:0]
	for _, a := range f.args {
		v, err := a.Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		args = append(args, v)
	}
	if f.size != nil {
		if n := f.size(args); n > minMaxAllowedPacket && env.resultTooLarge(f.name, n) {
			return types.Null, nil
		}
	}
	v, err := f.f(args)
	if err != nil {
		if w, ok := err.(*builtins.FuncWarning); ok {
			env.warn(w.Warn)
			v, err = w.Value, nil
		}
	}
	if len(v.S) > minMaxAllowedPacket && env.resultTooLarge(f.name, int64(len(v.S))) {
		return types.Null, nil
	}
	// Temporal results print with the static type's precision (a TIME(6) column of TIME(str)).
	if (v.K == types.KindDuration && f.t.Tp == mysql.TypeDuration || v.K == types.KindDatetime && f.t.Tp == mysql.TypeDatetime) && f.t.Frac >= int(v.Frac) && f.t.Frac <= 6 {
		v.Frac = int8(f.t.Frac)
	}
	return v, err
}

// closureExpr evaluates a Go function of its arguments' values with access to the session (NOW(),
// DATABASE(), IF, COALESCE... anything that is not a pure builtin or needs laziness).
type closureExpr struct {
	typed
	name string // set for functions whose string result is bounded by max_allowed_packet
	args []Expr
	lazy bool // fn evaluates args itself
	fn   func(env *Env, row []types.Value, args []Expr) (types.Value, error)
}

func (c *closureExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := c.fn(env, row, c.args)
	if c.name != "" && len(v.S) > minMaxAllowedPacket && err == nil && env.resultTooLarge(c.name, int64(len(v.S))) {
		return types.Null, nil
	}
	return v, err
}

// caseExpr is CASE [v] WHEN ... THEN ... [ELSE] END.
type caseExpr struct {
	typed
	value Expr // nil for searched CASE
	whens []Expr
	thens []Expr
	els   Expr
	coll  *types.Collation
}

func (c *caseExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	var v types.Value
	var err error
	if c.value != nil {
		if v, err = c.value.Eval(env, row); err != nil {
			return types.Null, err
		}
	}
	for i, w := range c.whens {
		wv, err := w.Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		var hit bool
		if c.value != nil {
			hit = !v.IsNull() && !wv.IsNull() && types.Compare(v, wv, c.coll) == 0
		} else {
			b, null := types.ToBool(wv)
			hit = b && !null
		}
		if hit {
			return c.result(env, row, c.thens[i])
		}
	}
	if c.els != nil {
		return c.result(env, row, c.els)
	}
	return types.Null, nil
}

func (c *caseExpr) result(env *Env, row []types.Value, e Expr) (types.Value, error) {
	v, err := e.Eval(env, row)
	if err != nil {
		return v, err
	}
	return coerceTo(v, c.t), nil
}

// coerceTo adapts a branch value to the expression's unified result type where MySQL would (numbers
// in a string context become strings, ints in a decimal context become decimals).
func coerceTo(v types.Value, t types.ColType) types.Value {
	if v.IsNull() {
		return v
	}
	switch {
	case t.Tp == mysql.TypeVarString && v.K != types.KindString && v.K != types.KindBytes:
		return types.NewString(types.ToString(v))
	case t.Tp == mysql.TypeDouble && v.K != types.KindFloat:
		return types.NewFloat(types.ToFloat(v))
	case t.Tp == mysql.TypeNewDecimal && (v.K == types.KindInt || v.K == types.KindUint):
		return types.NewDecimal(types.ToDecimal(v), 0)
	}
	return v
}

// rowExpr is (a, b, ...): only valid as an operand of comparisons and IN.
type rowExpr struct {
	typed
	items []Expr
}

func (r *rowExpr) Eval(*Env, []types.Value) (types.Value, error) {
	return types.Null, sqlerr.New(sqlerr.ErrOperandColumns, "Operand should contain 1 column(s)")
}

// rowCmpExpr compares two row constructors element-wise: (a,b) = (c,d), (a,b) IN ((..),(..)).
type rowCmpExpr struct {
	typed
	l    []Expr
	rs   [][]Expr // one for =, several for IN
	not  bool
	coll *types.Collation
}

func (r *rowCmpExpr) Eval(env *Env, row []types.Value) (types.Value, error) {
	lv := make([]types.Value, len(r.l))
	for i, e := range r.l {
		v, err := e.Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		lv[i] = v
	}
	anyNull := false
	for _, rr := range r.rs {
		eq, null := true, false
		for i, e := range rr {
			v, err := e.Eval(env, row)
			if err != nil {
				return types.Null, err
			}
			if v.IsNull() || lv[i].IsNull() {
				null = true
				continue
			}
			if types.Compare(lv[i], v, r.coll) != 0 {
				eq = false
				break
			}
		}
		if eq && !null {
			return boolVal(!r.not), nil
		}
		if eq && null {
			anyNull = true
		}
	}
	if anyNull {
		return types.Null, nil
	}
	return boolVal(r.not), nil
}
