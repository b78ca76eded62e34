package expr

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

// Typed carries an expression's static result type.
type Typed struct{ T types.ColType }

func (t Typed) Type() types.ColType { return t.T }

var (
	TInt     = types.ColType{Tp: mysql.TypeLonglong, Len: 21, Collation: "binary"}
	TUint    = types.ColType{Tp: mysql.TypeLonglong, Unsigned: true, Len: 20, Collation: "binary"}
	TDouble  = types.ColType{Tp: mysql.TypeDouble, Len: 22, Frac: -1, Collation: "binary"}
	TDecimal = types.ColType{Tp: mysql.TypeNewDecimal, Len: 65, Frac: 4, Collation: "binary"}
	TString  = types.ColType{Tp: mysql.TypeVarString, Len: 255, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	TBytes   = types.ColType{Tp: mysql.TypeVarString, Len: 255, Charset: "binary", Collation: "binary"}
	TNull    = types.ColType{Tp: mysql.TypeNull, Collation: "binary"}
	TBool    = types.ColType{Tp: mysql.TypeLonglong, Len: 1, Collation: "binary"}
	TDate    = types.ColType{Tp: mysql.TypeDate, Len: 10, Collation: "binary"}
	TDT      = types.ColType{Tp: mysql.TypeDatetime, Len: 19, Collation: "binary"}
	TTime    = types.ColType{Tp: mysql.TypeDuration, Len: 10, Collation: "binary"}
)

// TypeOfValue is the static type of a literal.
func TypeOfValue(v types.Value) types.ColType {
	switch v.K {
	case types.KindInt:
		return TInt
	case types.KindUint:
		return TUint
	case types.KindFloat:
		return TDouble
	case types.KindDecimal:
		t := TDecimal
		t.Frac = int(v.Frac)
		return t
	case types.KindString:
		return TString
	case types.KindBytes:
		return TBytes
	case types.KindDate:
		return TDate
	case types.KindDatetime:
		t := TDT
		t.Frac = int(v.Frac)
		return t
	case types.KindDuration:
		return TTime
	}
	return TNull
}

// Const is a literal.
type Const struct {
	Typed
	V   types.Value
	Hex bool // a hexadecimal or bit literal: a number in numeric context
}

func (c *Const) Eval(*Env, []types.Value) (types.Value, error) { return c.V, nil }

// NewConst is the literal v with its static type.
func NewConst(v types.Value) *Const { return &Const{Typed: Typed{TypeOfValue(v)}, V: v} }

// HexNumber is the value of a hex or bit literal in numeric context: its bytes as a big-endian
// BIGINT UNSIGNED (e stays as it is otherwise).
func HexNumber(e Expr) Expr {
	k, ok := e.(*Const)
	if !ok || !k.Hex {
		return e
	}
	var u uint64
	for i := 0; i < len(k.V.S); i++ {
		u = u<<8 | uint64(k.V.S[i])
	}
	return NewConst(types.NewUint(u))
}

// Col reads a column of the row.
type Col struct {
	Typed
	Idx  int
	Name string
}

func (c *Col) Eval(_ *Env, row []types.Value) (types.Value, error) { return row[c.Idx], nil }

// OuterCol reads a column of an enclosing query's current row.
type OuterCol struct {
	Typed
	Depth int
	Idx   int
}

func (o *OuterCol) Eval(env *Env, _ []types.Value) (types.Value, error) {
	n := len(env.outer) - o.Depth
	if n < 0 || o.Idx >= len(env.outer[n]) {
		return types.Null, nil
	}
	return env.outer[n][o.Idx], nil
}

// Param reads a placeholder's bound value.
type Param struct {
	Typed
	Idx int
}

func (p *Param) Eval(env *Env, _ []types.Value) (types.Value, error) {
	if p.Idx >= len(env.Params) {
		return types.Null, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to EXECUTE")
	}
	return env.Params[p.Idx], nil
}

// Arith is + - * / DIV %.
type Arith struct {
	Typed
	Op   opcode.Op
	L, R Expr
}

func (a *Arith) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := a.L.Eval(env, row)
	if err != nil || l.IsNull() {
		return types.Null, err
	}
	r, err := a.R.Eval(env, row)
	if err != nil || r.IsNull() {
		return types.Null, err
	}
	var v types.Value
	switch a.Op {
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

// Bit is & | ^ << >>, on unsigned 64-bit integers as MySQL does.
type Bit struct {
	Typed
	Op   opcode.Op
	L, R Expr
}

func (b *Bit) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := b.L.Eval(env, row)
	if err != nil || l.IsNull() {
		return types.Null, err
	}
	r, err := b.R.Eval(env, row)
	if err != nil || r.IsNull() {
		return types.Null, err
	}
	x, y := ToUint64(l), ToUint64(r)
	switch b.Op {
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

// ToUint64 is v as an unsigned 64-bit integer, as MySQL's bit operators take it (rounded,
// negative values wrap, clamped at the maximum).
func ToUint64(v types.Value) uint64 {
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

// Cmp is = <> < <= > >= <=>.
type Cmp struct {
	Typed
	Op   opcode.Op
	L, R Expr
	Coll *types.Collation
}

func (c *Cmp) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := c.L.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	r, err := c.R.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	if l.IsNull() || r.IsNull() {
		if c.Op == opcode.NullEQ {
			return BoolVal(l.IsNull() && r.IsNull()), nil
		}
		return types.Null, nil
	}
	n := types.Compare(l, r, c.Coll)
	return BoolVal(cmpResult(c.Op, n)), nil
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

// BoolVal is 1 or 0.
func BoolVal(b bool) types.Value {
	if b {
		return vTrue
	}
	return vFalse
}

// Logic is AND, OR, XOR with SQL's three-valued logic.
type Logic struct {
	Typed
	Op   opcode.Op
	L, R Expr
}

func (e *Logic) Eval(env *Env, row []types.Value) (types.Value, error) {
	l, err := e.L.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	lb, lnull := types.ToBool(l)
	switch e.Op {
	case opcode.LogicAnd:
		if !lnull && !lb {
			return vFalse, nil
		}
	case opcode.LogicOr:
		if !lnull && lb {
			return vTrue, nil
		}
	}
	r, err := e.R.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	rb, rnull := types.ToBool(r)
	switch e.Op {
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
		return BoolVal(lb != rb), nil
	}
}

// Not is NOT / !.
type Not struct {
	Typed
	E Expr
}

func (n *Not) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	b, null := types.ToBool(v)
	if null {
		return types.Null, nil
	}
	return BoolVal(!b), nil
}

// Neg is unary minus; BitNeg is ~.
type Neg struct {
	Typed
	E Expr
}

func (n *Neg) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	return types.Neg(v)
}

// BitNeg is ~.
type BitNeg struct {
	Typed
	E Expr
}

func (n *BitNeg) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	return types.NewUint(^ToUint64(v)), nil
}

// IsNull is IS [NOT] NULL.
type IsNull struct {
	Typed
	E   Expr
	Not bool
}

func (n *IsNull) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	return BoolVal(v.IsNull() != n.Not), nil
}

// IsTruth is IS [NOT] TRUE/FALSE.
type IsTruth struct {
	Typed
	E    Expr
	Not  bool
	True bool
}

func (n *IsTruth) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	b, null := types.ToBool(v)
	res := !null && b == n.True
	return BoolVal(res != n.Not), nil
}

// In is x [NOT] IN (list).
type In struct {
	Typed
	E    Expr
	List []Expr
	Not  bool
	Coll *types.Collation
	// A list of integer literals (and NULLs) is also kept sorted, so an integer operand is found by
	// binary search rather than compared with every element (a list of a million ids would cost a
	// million comparisons per row).
	Ints     []int64
	IntsNull bool // the list holds a NULL
	AllInts  bool
}

// ConstIntSet returns the sorted integer literals of list when every element is an integer literal
// or NULL.
func ConstIntSet(list []Expr) (ints []int64, hasNull, ok bool) {
	if len(list) < 8 {
		return nil, false, false // a short list is scanned as fast
	}
	ints = make([]int64, 0, len(list))
	for _, e := range list {
		k, isConst := e.(*Const)
		switch {
		case !isConst || k.Hex:
			return nil, false, false
		case k.V.K == types.KindNull:
			hasNull = true
		case k.V.K == types.KindInt:
			ints = append(ints, k.V.I)
		default:
			return nil, false, false
		}
	}
	slices.Sort(ints)
	return slices.Compact(ints), hasNull, true
}

func (n *In) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	if n.AllInts && (v.K == types.KindInt || v.K == types.KindUint) {
		// Integers compare exactly: a KindUint past MaxInt64 equals no literal of the list.
		_, found := slices.BinarySearch(n.Ints, v.I)
		found = found && (v.K == types.KindInt || v.I >= 0)
		switch {
		case found:
			return BoolVal(!n.Not), nil
		case n.IntsNull:
			return types.Null, nil
		}
		return BoolVal(n.Not), nil
	}
	sawNull := false
	for i, le := range n.List {
		// A list of a million values is a long loop for each row.
		if i&1023 == 1023 {
			if err := env.Interrupted(); err != nil {
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
		if types.Compare(v, x, n.Coll) == 0 {
			return BoolVal(!n.Not), nil
		}
	}
	if sawNull {
		return types.Null, nil
	}
	return BoolVal(n.Not), nil
}

// Between is x [NOT] BETWEEN a AND b.
type Between struct {
	Typed
	E, Lo, Hi Expr
	Not       bool
	Coll      *types.Collation
}

func (n *Between) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	lo, err := n.Lo.Eval(env, row)
	if err != nil {
		return types.Null, err
	}
	hi, err := n.Hi.Eval(env, row)
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
		geLo = BoolVal(types.Compare(v, lo, n.Coll) >= 0)
	}
	if hi.IsNull() {
		leHi = types.Null
	} else {
		leHi = BoolVal(types.Compare(v, hi, n.Coll) <= 0)
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
	if n.Not {
		return BoolVal(res.I == 0), nil
	}
	return res, nil
}

// Like is x [NOT] LIKE pattern [ESCAPE c].
type Like struct {
	Typed
	E, Pat Expr
	Not    bool
	Escape byte
	Fold   bool // case-insensitive collation
}

func (n *Like) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := n.E.Eval(env, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	p, err := n.Pat.Eval(env, row)
	if err != nil || p.IsNull() {
		return types.Null, err
	}
	s, ps := types.ToString(v), types.ToString(p)
	if n.Fold {
		s, ps = strings.ToLower(s), strings.ToLower(ps)
	}
	return BoolVal(types.LikeRunes([]rune(s), []rune(ps), rune(n.Escape)) != n.Not), nil
}

// Func calls a pure builtin from internal/sql/types.
type Func struct {
	Typed
	name string
	f    builtins.Func
	Args []Expr
	size builtins.SizeFunc // the result's length before it is built (nil: checked after)
}

// NewFunc is a call of the pure builtin f named name, with result type t.
func NewFunc(t types.ColType, name string, f builtins.Func, args []Expr) *Func {
	return &Func{Typed: Typed{t}, name: name, f: f, Args: args, size: builtins.LookupFuncSize(name)}
}

// Name is the builtin's lower-case name.
func (f *Func) Name() string { return f.name }

func (f *Func) Eval(env *Env, row []types.Value) (types.Value, error) {
	var buf [4]types.Value
	args := buf[:0]
	for _, a := range f.Args {
		v, err := a.Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		args = append(args, v)
	}
	if f.size != nil {
		if n := f.size(args); n > MinMaxAllowedPacket && env.ResultTooLarge(f.name, n) {
			return types.Null, nil
		}
	}
	v, err := f.f(args)
	if err != nil {
		if w, ok := err.(*builtins.FuncWarning); ok {
			env.Warn(w.Warn)
			v, err = w.Value, nil
		}
	}
	if len(v.S) > MinMaxAllowedPacket && env.ResultTooLarge(f.name, int64(len(v.S))) {
		return types.Null, nil
	}
	// Temporal results print with the static type's precision (a TIME(6) column of TIME(str)).
	if (v.K == types.KindDuration && f.T.Tp == mysql.TypeDuration || v.K == types.KindDatetime && f.T.Tp == mysql.TypeDatetime) && f.T.Frac >= int(v.Frac) && f.T.Frac <= 6 {
		v.Frac = int8(f.T.Frac)
	}
	return v, err
}

// Closure evaluates a Go function of its arguments' values with access to the session (NOW(),
// DATABASE(), IF, COALESCE... anything that is not a pure builtin or needs laziness).
type Closure struct {
	Typed
	Name string // set for functions whose string result is bounded by max_allowed_packet
	Args []Expr
	Lazy bool // fn evaluates args itself
	Fn   func(env *Env, row []types.Value, args []Expr) (types.Value, error)
}

func (c *Closure) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := c.Fn(env, row, c.Args)
	if c.Name != "" && len(v.S) > MinMaxAllowedPacket && err == nil && env.ResultTooLarge(c.Name, int64(len(v.S))) {
		return types.Null, nil
	}
	return v, err
}

// Case is CASE [v] WHEN ... THEN ... [ELSE] END.
type Case struct {
	Typed
	Value Expr // nil for searched CASE
	Whens []Expr
	Thens []Expr
	Els   Expr
	Coll  *types.Collation
	// JSONBool marks the WHENs that are booleans while Value is JSON: they compare with the
	// document as a JSON boolean (JSONBoolOf), as MySQL does. nil when there is none.
	JSONBool []bool
}

func (c *Case) Eval(env *Env, row []types.Value) (types.Value, error) {
	var v types.Value
	var err error
	if c.Value != nil {
		if v, err = c.Value.Eval(env, row); err != nil {
			return types.Null, err
		}
	}
	for i, w := range c.Whens {
		wv, err := w.Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		var hit bool
		if c.Value != nil {
			if c.JSONBool != nil && c.JSONBool[i] {
				hit = !v.IsNull() && !wv.IsNull() && types.Compare(JSONBoolOf(v), wv, nil) == 0
			} else {
				hit = !v.IsNull() && !wv.IsNull() && types.Compare(v, wv, c.Coll) == 0
			}
		} else {
			b, null := types.ToBool(wv)
			hit = b && !null
		}
		if hit {
			return c.result(env, row, c.Thens[i])
		}
	}
	if c.Els != nil {
		return c.result(env, row, c.Els)
	}
	return types.Null, nil
}

func (c *Case) result(env *Env, row []types.Value, e Expr) (types.Value, error) {
	v, err := e.Eval(env, row)
	if err != nil {
		return v, err
	}
	return CoerceTo(v, c.T), nil
}

// CoerceTo adapts a branch value to the expression's unified result type (UnifyTypes) where MySQL
// would: numbers in a string context become strings, and in a DECIMAL context an integer or a
// decimal of a smaller scale takes the result's scale (IF(1,10,1.5) is 10.0, not 10). It is the
// value side of the one type derivation that CASE, IF, IFNULL, COALESCE and UNION share.
func CoerceTo(v types.Value, t types.ColType) types.Value {
	if v.IsNull() {
		return v
	}
	switch {
	case t.Tp == mysql.TypeVarString && v.K != types.KindString && v.K != types.KindBytes:
		return types.NewString(types.ToString(v))
	case t.Tp == mysql.TypeDouble && v.K != types.KindFloat:
		return types.NewFloat(types.ToFloat(v))
	case t.Tp == mysql.TypeNewDecimal && (v.K == types.KindInt || v.K == types.KindUint):
		return types.NewDecimal(types.ToDecimal(v), decimalScale(t))
	case t.Tp == mysql.TypeNewDecimal && v.K == types.KindDecimal && int(v.Frac) < decimalScale(t):
		return types.NewDecimal(v.D, decimalScale(t))
	}
	return v
}

// decimalScale is the scale a DECIMAL result type shows: its Frac, within MySQL's 0..30.
func decimalScale(t types.ColType) int {
	return min(max(t.Frac, 0), 30)
}

// Row is (a, b, ...): only valid as an operand of comparisons and IN.
type Row struct {
	Typed
	Items []Expr
}

func (r *Row) Eval(*Env, []types.Value) (types.Value, error) {
	return types.Null, sqlerr.New(sqlerr.ErrOperandColumns, "Operand should contain 1 column(s)")
}

// RowCmp compares two row constructors element-wise: (a,b) = (c,d), (a,b) IN ((..),(..)).
type RowCmp struct {
	Typed
	L     []Expr
	Rs    [][]Expr // one for =, several for IN
	Not   bool
	Colls []*types.Collation // per position: the collation strings there compare in
}

func (r *RowCmp) Eval(env *Env, row []types.Value) (types.Value, error) {
	lv := make([]types.Value, len(r.L))
	for i, e := range r.L {
		v, err := e.Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		lv[i] = v
	}
	anyNull := false
	for _, rr := range r.Rs {
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
			var coll *types.Collation
			if i < len(r.Colls) {
				coll = r.Colls[i]
			}
			if types.Compare(lv[i], v, coll) != 0 {
				eq = false
				break
			}
		}
		if eq && !null {
			return BoolVal(!r.Not), nil
		}
		if eq && null {
			anyNull = true
		}
	}
	if anyNull {
		return types.Null, nil
	}
	return BoolVal(r.Not), nil
}
