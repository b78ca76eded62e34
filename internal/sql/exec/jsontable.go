package exec

import (
	"encoding/json"
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// JSONTable is a JSON_TABLE level: a table function whose rows come from a JSON document, read
// once each time the level opens. Its document expression is bound over the joined row of the
// levels before it (a lateral reference), so an inner JSON_TABLE level yields the rows of the
// current outer row's document. The plan is immutable: per-execution state lives in Rows' locals.
type JSONTable struct {
	Alias string
	Doc   expr.Expr // the document; NULL yields no rows
	Root  *JTNode   // the row path and its columns
	Width int       // the level's columns
	// Const: the document reads no earlier level and no enclosing query's row, so the level's
	// rows are the same for every outer row: computed once per execution of the block.
	Const bool
}

// JTNode is a path with its columns: the row path (Root) or a NESTED PATH.
type JTNode struct {
	Path   *types.JSONPath
	Cols   []JTCol
	Nested []*JTNode
	// First and End bound the level's columns this node and its nested paths fill.
	First, End int
}

// JTColKind is what a column holds.
type JTColKind uint8

const (
	JTOrdinality JTColKind = iota // the row number within its path's matches, from 1
	JTValue                       // the value at a path
	JTExists                      // 1 if the path finds something, else 0
)

// JTCol is one column of a node (not a NESTED PATH).
type JTCol struct {
	Kind JTColKind
	Name string
	Idx  int // position in the level's row
	T    types.ColType
	Path *types.JSONPath
	// OnEmpty and OnError answer a missing value and a value that does not fit the column.
	OnEmpty, OnError JTResponse
}

// JTResponse is an ON EMPTY or ON ERROR clause: NULL (the default), a DEFAULT value (already in
// the column's type) or ERROR.
type JTResponse struct {
	Error   bool
	Default types.Value // NULL unless DEFAULT was given
}

// Rows produces the level's rows for the current joined row (the lateral reference's source).
// Each row is counted against the statement's memory quota and the loop checks for KILL, as
// Materialize does for derived tables.
func (jt *JSONTable) Rows(env *expr.Env, row []types.Value) ([][]types.Value, error) {
	v, err := jt.Doc.Eval(env, row)
	if err != nil || v.IsNull() {
		return nil, err
	}
	doc, err := expr.JSONDocArg("json_table", 1, jt.Doc, v)
	if err != nil {
		return nil, err
	}
	r := jtRun{env: env, cur: make([]types.Value, jt.Width)}
	if _, err := r.node(jt.Root, doc); err != nil {
		return nil, err
	}
	return r.out, nil
}

type jtRun struct {
	env *expr.Env
	cur []types.Value // the row being filled
	out [][]types.Value
}

func (r *jtRun) emit() error {
	if err := r.env.CheckKilled(); err != nil {
		return err
	}
	row := make([]types.Value, len(r.cur))
	copy(row, r.cur)
	if err := r.env.GrowRow(row); err != nil {
		return err
	}
	r.out = append(r.out, row)
	return nil
}

// node emits the rows of n over the context item ctx and returns how many. Each match of n's
// path fills n's columns; then each NESTED PATH in turn emits its rows with the other ones'
// columns NULL (sibling nested paths are a union, as in MySQL); a match whose nested paths find
// nothing is emitted once with their columns NULL (an outer join).
func (r *jtRun) node(n *JTNode, ctx any) (int, error) {
	count := 0
	for i, m := range n.Path.Find(ctx) {
		for c := range n.Cols {
			v, err := r.column(&n.Cols[c], m, i+1)
			if err != nil {
				return 0, err
			}
			r.cur[n.Cols[c].Idx] = v
		}
		produced := 0
		for _, s := range n.Nested {
			k, err := r.node(s, m)
			if err != nil {
				return 0, err
			}
			produced += k
			for c := s.First; c < s.End; c++ {
				r.cur[c] = types.Null
			}
		}
		if produced == 0 {
			if err := r.emit(); err != nil {
				return 0, err
			}
			produced = 1
		}
		count += produced
	}
	return count, nil
}

// column computes one column's value for the context item m, the ord-th match of its path.
func (r *jtRun) column(c *JTCol, m any, ord int) (types.Value, error) {
	switch c.Kind {
	case JTOrdinality:
		return types.NewUint(uint64(ord)), nil
	case JTExists:
		n := int64(0)
		if len(c.Path.Find(m)) > 0 {
			n = 1
		}
		v, _, err := types.Convert(types.NewInt(n), &c.T, types.ConvertCtx{})
		return v, err
	}
	found := c.Path.Find(m)
	if len(found) == 0 {
		if c.OnEmpty.Error {
			return types.Null, sqlerr.New(sqlerr.ErrMissingJSONTableValue, "Missing value for JSON_TABLE column '%s'", c.Name)
		}
		return c.OnEmpty.Default, nil
	}
	if len(found) == 1 && found[0] == nil {
		return types.Null, nil // a JSON null is SQL NULL in any column (MySQL 8.0.21+)
	}
	if expr.IsJSONType(c.T) {
		if len(found) > 1 {
			return expr.JSONResult(found), nil // several matches make an array in a JSON column
		}
		return expr.JSONResult(found[0]), nil
	}
	var doc any
	if len(found) == 1 {
		doc = found[0]
	}
	switch doc.(type) {
	case nil, []any, map[string]any: // several matches, an array or an object
		return r.onError(c, errWrongJTValue(c.Name))
	}
	v, err := JTScalar(doc, &c.T, c.Name)
	if err != nil {
		return r.onError(c, err)
	}
	return v, nil
}

// errWrongJTValue is MySQL's 3666: several values, an array or an object for a scalar column.
func errWrongJTValue(name string) error {
	return sqlerr.New(sqlerr.ErrWrongJSONTableValue, "Can't store an array or an object in the scalar JSON_TABLE column '%s'", name)
}

// onError answers a value that does not fit the column: ERROR ON ERROR raises err.
func (r *jtRun) onError(c *JTCol, err error) (types.Value, error) {
	if c.OnError.Error {
		return types.Null, err
	}
	return c.OnError.Default, nil
}

// JTScalar converts a JSON scalar (string, number, boolean) to a column of type t, strictly: any
// truncation or bad value is an error (the column's ON ERROR answers it). A value that is no
// number for a numeric column is 3156, as MySQL's JSON-to-number coercion reports it; the rest
// (out of range, too long) 3669.
func JTScalar(doc any, t *types.ColType, name string) (types.Value, error) {
	var v types.Value
	switch x := doc.(type) {
	case string:
		v = types.NewString(x)
	case bool:
		if isNumericType(t) {
			v = types.NewInt(0)
			if x {
				v = types.NewInt(1)
			}
		} else {
			v = types.NewString(strconv.FormatBool(x))
		}
	case json.Number:
		v = jsonNumberValue(string(x))
	default:
		return types.Null, errWrongJTValue(name)
	}
	out, _, err := types.Convert(v, t, types.ConvertCtx{Strict: true, Column: name, Row: 1})
	if err == nil {
		return out, nil
	}
	if s, ok := doc.(string); ok && isNumericType(t) && !looksNumeric(s) {
		target := "INTEGER"
		switch {
		case t.Tp == mysql.TypeNewDecimal:
			target = "DECIMAL"
		case t.Tp == mysql.TypeFloat || t.Tp == mysql.TypeDouble:
			target = "DOUBLE"
		}
		return types.Null, sqlerr.New(sqlerr.ErrInvalidJSONValueForCast, "Invalid JSON value for CAST to %s from column %s at row 1", target, name)
	}
	return types.Null, sqlerr.New(sqlerr.ErrJTValueOutOfRange, "Value is out of range for JSON_TABLE's column '%s'", name)
}

func isNumericType(t *types.ColType) bool {
	switch t.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong, mysql.TypeYear,
		mysql.TypeNewDecimal, mysql.TypeFloat, mysql.TypeDouble:
		return true
	}
	return false
}

// looksNumeric reports whether s reads as a number (blanks around it allowed).
func looksNumeric(s string) bool {
	i, n := 0, len(s)
	for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	for n > i && (s[n-1] == ' ' || s[n-1] == '\t' || s[n-1] == '\n' || s[n-1] == '\r') {
		n--
	}
	_, err := strconv.ParseFloat(s[i:n], 64)
	return err == nil || errorIsRange(err)
}

func errorIsRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// jsonNumberValue is a JSON number as an SQL value: an integer, else a double, as MySQL's JSON
// parser reads numbers (1.50 is the double 1.5).
func jsonNumberValue(s string) types.Value {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return types.NewInt(i)
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return types.NewUint(u)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return types.NewFloat(f)
}
