package expr

import (
	"errors"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

var TJSON = types.ColType{Tp: mysql.TypeJSON, Len: -1, Frac: -1, Collation: "binary"}

// IsJSONType reports whether t is JSON.
func IsJSONType(t types.ColType) bool { return t.Tp == mysql.TypeJSON }

// JSONDocArg parses a function's document argument: a JSON-typed value or a string holding JSON
// text (3141 if it is not).
func JSONDocArg(fn string, pos int, e Expr, v types.Value) (any, error) {
	if !IsJSONType(e.Type()) && v.K != types.KindString && v.K != types.KindBytes {
		return nil, sqlerr.New(sqlerr.ErrInvalidJSONTextInParam, "Invalid data type for JSON data in argument %d to function %s; a JSON string or JSON type is required.", pos, fn)
	}
	doc, err := types.ParseJSON(v.S)
	if err != nil {
		var je *types.ErrInvalidJSON
		errors.As(err, &je)
		return nil, sqlerr.New(sqlerr.ErrInvalidJSONTextInParam, "Invalid JSON text in argument %d to function %s: \"%s\" at position %d.", pos, fn, je.Msg, je.Pos)
	}
	return doc, nil
}

// JSONValueArg turns a function's value argument into a document: JSON-typed values are embedded,
// other values become JSON scalars (strings stay strings).
func JSONValueArg(e Expr, v types.Value) any {
	if v.IsNull() {
		return nil
	}
	if IsJSONType(e.Type()) {
		if doc, err := types.ParseJSON(v.S); err == nil {
			return doc
		}
	}
	switch v.K {
	case types.KindInt, types.KindUint, types.KindDecimal:
		return types.JSONNumber(types.ToString(v))
	case types.KindFloat:
		f := v
		f.Frac = 0
		return types.JSONNumber(types.ToString(f))
	}
	return types.ToString(v)
}

// JSONPathArg parses a path argument (error 3143 if it is not one).
func JSONPathArg(v types.Value) (*types.JSONPath, error) {
	p, err := types.ParseJSONPath(types.ToString(v))
	if err != nil {
		return nil, sqlerr.New(sqlerr.ErrInvalidJSONPath, "Invalid JSON path expression. The error is around character position %d.", len(types.ToString(v)))
	}
	return p, nil
}

// ErrWildPath is error 3149: a path with wildcards where one is not allowed.
func ErrWildPath() error {
	return sqlerr.New(sqlerr.ErrInvalidJSONPathWildcard, "In this situation, path expressions may not contain the * and ** tokens or an array range.")
}

// JSONBuilders are the JSON functions whose result contains every argument.
var JSONBuilders = map[string]bool{"json_object": true, "json_array": true, "json_quote": true,
	"json_merge_patch": true, "json_merge_preserve": true, "json_merge": true, "json_pretty": true}

// JSONResult is a JSON document as a function result (its text).
func JSONResult(doc any) types.Value { return types.NewString(types.JSONText(doc)) }

// CastJSON is CAST(e AS JSON).
func CastJSON(e Expr) Expr {
	return &Closure{Typed: Typed{TJSON}, Args: []Expr{e}, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		v, err := a[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return types.Null, err
		}
		if v.K == types.KindString || v.K == types.KindBytes {
			doc, err := JSONDocArg("cast_as_json", 1, a[0], v)
			if err != nil {
				return types.Null, err
			}
			return JSONResult(doc), nil
		}
		return JSONResult(JSONValueArg(a[0], v)), nil
	}}
}

// EvalArgs evaluates every argument of a function; null reports whether any is NULL.
func EvalArgs(env *Env, row []types.Value, a []Expr) ([]types.Value, bool, error) {
	vs := make([]types.Value, len(a))
	null := false
	for i, e := range a {
		v, err := e.Eval(env, row)
		if err != nil {
			return nil, false, err
		}
		vs[i] = v
		null = null || v.IsNull()
	}
	return vs, null, nil
}

// JSONBoolOf is a JSON document as the operand of a comparison with a boolean (TRUE, FALSE, a
// comparison): MySQL turns the boolean into a JSON boolean there, so JSON true equals TRUE and JSON
// false equals FALSE, and any other document (1, "true", null) equals neither. It maps true and
// false to 1 and 0 and every other document to -1, a value no boolean has; SQL NULL stays NULL.
func JSONBoolOf(v types.Value) types.Value {
	if v.IsNull() {
		return v
	}
	if doc, err := types.ParseJSON(types.ToString(v)); err == nil {
		if b, ok := doc.(bool); ok {
			if b {
				return types.NewInt(1)
			}
			return types.NewInt(0)
		}
	}
	return types.NewInt(-1)
}

// JSONBoolOperand wraps a JSON-typed operand compared with a boolean (see JSONBoolOf).
func JSONBoolOperand(e Expr) Expr {
	return &Closure{Typed: Typed{TInt}, Args: []Expr{e}, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		v, err := a[0].Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		return JSONBoolOf(v), nil
	}}
}
