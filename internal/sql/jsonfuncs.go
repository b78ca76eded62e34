package sql

import (
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// JSON functions. A JSON value travels as a KindString holding MySQL's normalized text, and an
// expression whose static type is TypeJSON is known to hold one: that is how JSON_OBJECT('a',
// j) embeds j's document while JSON_OBJECT('a', 'x') embeds the string "x".

var tJSON = types.ColType{Tp: mysql.TypeJSON, Len: -1, Frac: -1, Collation: "binary"}

func isJSONType(t types.ColType) bool { return t.Tp == mysql.TypeJSON }

// jsonDocArg parses a function's document argument: a JSON-typed value or a string holding JSON
// text (3141 if it is not).
func jsonDocArg(fn string, pos int, e Expr, v types.Value) (any, error) {
	if !isJSONType(e.Type()) && v.K != types.KindString && v.K != types.KindBytes {
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

// jsonValueArg turns a function's value argument into a document: JSON-typed values are embedded,
// other values become JSON scalars (strings stay strings).
func jsonValueArg(e Expr, v types.Value) any {
	if v.IsNull() {
		return nil
	}
	if isJSONType(e.Type()) {
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

func jsonPathArg(v types.Value) (*types.JSONPath, error) {
	p, err := types.ParseJSONPath(types.ToString(v))
	if err != nil {
		return nil, sqlerr.New(sqlerr.ErrInvalidJSONPath, "Invalid JSON path expression. The error is around character position %d.", len(types.ToString(v)))
	}
	return p, nil
}

func errWildPath() error {
	return sqlerr.New(sqlerr.ErrInvalidJSONPathWildcard, "In this situation, path expressions may not contain the * and ** tokens or an array range.")
}

// jsonBuilders are the JSON functions whose result contains every argument.
var jsonBuilders = map[string]bool{"json_object": true, "json_array": true, "json_quote": true,
	"json_merge_patch": true, "json_merge_preserve": true, "json_merge": true, "json_pretty": true}

func jsonResult(doc any) types.Value { return types.NewString(types.JSONText(doc)) }

// jsonFunc compiles a JSON function, or returns ok=false if name is not one.
func (c *compiler) jsonFunc(name string, args []Expr) (Expr, bool, error) {
	argc := func(lo, hi int) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", name)
		}
		return nil
	}
	mk := func(t types.ColType, f func(env *Env, vs []types.Value, a []Expr) (types.Value, error), nullIfAnyNull bool) (Expr, bool, error) {
		builds := jsonBuilders[name]
		return &closureExpr{typed: typed{t}, name: name, args: args, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, null, err := evalArgs(env, row, a)
			if err != nil {
				return types.Null, err
			}
			if null && nullIfAnyNull {
				return types.Null, nil
			}
			// A builder's result holds its arguments: refuse before building one that cannot fit.
			if builds {
				if n := argsSize(vs); n > minMaxAllowedPacket && env.resultTooLarge(name, n) {
					return types.Null, nil
				}
			}
			return f(env, vs, a)
		}}, true, nil
	}
	switch name {
	case "json_extract":
		if err := argc(2, -1); err != nil {
			return nil, true, err
		}
		return mk(tJSON, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			var found []any
			wrap := len(vs) > 2
			for _, pv := range vs[1:] {
				p, err := jsonPathArg(pv)
				if err != nil {
					return types.Null, err
				}
				wrap = wrap || p.Wild()
				found = append(found, p.Find(doc)...)
			}
			if len(found) == 0 {
				return types.Null, nil
			}
			if !wrap {
				return jsonResult(found[0]), nil
			}
			return jsonResult(found), nil
		}, true)
	case "json_unquote":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		t := tString
		t.Len = -1
		t.Tp = mysql.TypeLongBlob
		return mk(t, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			s := types.ToString(vs[0])
			if isJSONType(a[0].Type()) || (len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"') {
				doc, err := types.ParseJSON(s)
				if err != nil {
					if isJSONType(a[0].Type()) {
						return types.NewString(s), nil
					}
					var je *types.ErrInvalidJSON
					errors.As(err, &je)
					return types.Null, sqlerr.New(sqlerr.ErrInvalidJSONTextInParam, "Invalid JSON text in argument 1 to function json_unquote: \"%s\" at position %d.", je.Msg, je.Pos)
				}
				return types.NewString(types.JSONUnquote(doc)), nil
			}
			return types.NewString(s), nil
		}, true)
	case "json_quote":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return mk(tString, func(_ *Env, vs []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(types.JSONText(types.ToString(vs[0]))), nil
		}, true)
	case "json_object":
		if len(args)%2 != 0 {
			return nil, true, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", name)
		}
		return mk(tJSON, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			m := map[string]any{}
			for i := 0; i < len(vs); i += 2 {
				if vs[i].IsNull() {
					return types.Null, sqlerr.New(sqlerr.ErrJSONNullMemberName, "JSON documents may not contain NULL member names.")
				}
				m[types.ToString(vs[i])] = jsonValueArg(a[i+1], vs[i+1])
			}
			return jsonResult(m), nil
		}, false)
	case "json_array":
		return mk(tJSON, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			arr := make([]any, len(vs))
			for i := range vs {
				arr[i] = jsonValueArg(a[i], vs[i])
			}
			return jsonResult(arr), nil
		}, false)
	case "json_valid":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return mk(tInt, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			if isJSONType(a[0].Type()) {
				return types.NewInt(1), nil
			}
			if vs[0].K != types.KindString && vs[0].K != types.KindBytes {
				return types.NewInt(0), nil
			}
			if _, err := types.ParseJSON(vs[0].S); err != nil {
				return types.NewInt(0), nil
			}
			return types.NewInt(1), nil
		}, true)
	case "json_type":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return mk(tString, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			return types.NewString(types.JSONTypeName(doc)), nil
		}, true)
	case "json_length", "json_keys", "json_depth":
		hi := 2
		if name == "json_depth" {
			hi = 1
		}
		if err := argc(1, hi); err != nil {
			return nil, true, err
		}
		t := tInt
		if name == "json_keys" {
			t = tJSON
		}
		return mk(t, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			if len(vs) > 1 {
				p, err := jsonPathArg(vs[1])
				if err != nil {
					return types.Null, err
				}
				if p.Wild() {
					return types.Null, errWildPath()
				}
				found := p.Find(doc)
				if len(found) == 0 {
					return types.Null, nil
				}
				doc = found[0]
			}
			switch name {
			case "json_length":
				return types.NewInt(int64(types.JSONLength(doc))), nil
			case "json_depth":
				return types.NewInt(int64(types.JSONDepth(doc))), nil
			}
			keys := types.JSONKeys(doc)
			if keys == nil {
				return types.Null, nil
			}
			return jsonResult(keys), nil
		}, true)
	case "json_contains":
		if err := argc(2, 3); err != nil {
			return nil, true, err
		}
		return mk(tInt, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			cand, err := jsonDocArg(name, 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			if len(vs) > 2 {
				p, err := jsonPathArg(vs[2])
				if err != nil {
					return types.Null, err
				}
				found := p.Find(doc)
				if len(found) == 0 {
					return types.Null, nil
				}
				doc = found[0]
			}
			if types.JSONContains(doc, cand) {
				return types.NewInt(1), nil
			}
			return types.NewInt(0), nil
		}, true)
	case "json_contains_path":
		if err := argc(3, -1); err != nil {
			return nil, true, err
		}
		return mk(tInt, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			mode := strings.ToLower(types.ToString(vs[1]))
			if mode != "one" && mode != "all" {
				return types.Null, sqlerr.New(sqlerr.ErrJSONBadOneOrAllArg, "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.")
			}
			for _, pv := range vs[2:] {
				p, err := jsonPathArg(pv)
				if err != nil {
					return types.Null, err
				}
				has := len(p.Find(doc)) > 0
				if has && mode == "one" {
					return types.NewInt(1), nil
				}
				if !has && mode == "all" {
					return types.NewInt(0), nil
				}
			}
			if mode == "all" {
				return types.NewInt(1), nil
			}
			return types.NewInt(0), nil
		}, true)
	case "json_set", "json_insert", "json_replace":
		mode := map[string]types.JSONModify{"json_set": types.JSONSet, "json_insert": types.JSONInsert, "json_replace": types.JSONReplace}[name]
		e, err := c.pathValuePairs(name, args, func(doc any, p *types.JSONPath, val any) (any, error) {
			return p.Modify(doc, val, mode), nil
		})
		return e, true, err
	case "json_remove":
		if err := argc(2, -1); err != nil {
			return nil, true, err
		}
		return mk(tJSON, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			for _, pv := range vs[1:] {
				p, err := jsonPathArg(pv)
				if err != nil {
					return types.Null, err
				}
				if p.Wild() {
					return types.Null, errWildPath()
				}
				if p.String() == "$" {
					return types.Null, sqlerr.New(sqlerr.ErrInvalidJSONPath, "Invalid JSON path expression. The error is around character position 1.")
				}
				doc = p.Remove(doc)
			}
			return jsonResult(doc), nil
		}, true)
	case "json_merge_patch", "json_merge_preserve", "json_merge":
		if err := argc(2, -1); err != nil {
			return nil, true, err
		}
		return mk(tJSON, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			var doc any
			for i := range vs {
				d, err := jsonDocArg(name, i+1, a[i], vs[i])
				if err != nil {
					return types.Null, err
				}
				switch {
				case i == 0:
					doc = d
				case name == "json_merge_patch":
					doc = types.JSONMergePatch(doc, d)
				default:
					doc = types.JSONMergePreserve(doc, d)
				}
			}
			return jsonResult(doc), nil
		}, true)
	case "json_array_append", "json_array_insert":
		e, err := c.pathValuePairs(name, args, func(doc any, p *types.JSONPath, val any) (any, error) {
			if name == "json_array_append" {
				return p.Update(doc, func(v any) any {
					if arr, ok := v.([]any); ok {
						return append(append([]any{}, arr...), val)
					}
					return []any{v, val}
				}), nil
			}
			doc, ok := p.ArrayInsert(doc, val)
			if !ok {
				return nil, sqlerr.New(sqlerr.ErrJSONPathNotArrayCell, "A path expression is not a path to a cell in an array.")
			}
			return doc, nil
		})
		return e, true, err
	case "json_search":
		if err := argc(3, -1); err != nil {
			return nil, true, err
		}
		return &closureExpr{typed: typed{tJSON}, name: name, args: args, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, _, err := evalArgs(env, row, a)
			if err != nil {
				return types.Null, err
			}
			for i, v := range vs {
				if v.IsNull() && i != 3 {
					return types.Null, nil
				}
			}
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			mode := strings.ToLower(types.ToString(vs[1]))
			if mode != "one" && mode != "all" {
				return types.Null, sqlerr.New(sqlerr.ErrJSONBadOneOrAllArg, "The oneOrAll argument to json_search may take these values: 'one' or 'all'.")
			}
			esc := '\\'
			if len(vs) > 3 && !vs[3].IsNull() {
				e := []rune(types.ToString(vs[3]))
				if len(e) > 1 {
					return types.Null, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to ESCAPE")
				}
				if len(e) == 1 {
					esc = e[0]
				}
			}
			match := types.LikeMatcher(types.ToString(vs[2]), esc)
			var found []string
			seen := map[string]bool{}
			if len(vs) <= 4 {
				types.JSONSearch(doc, "$", match, &found, seen)
			}
			for _, pv := range vs[min(len(vs), 4):] {
				p, err := jsonPathArg(pv)
				if err != nil {
					return types.Null, err
				}
				for _, f := range p.FindPaths(doc) {
					types.JSONSearch(f.V, f.Path, match, &found, seen)
				}
			}
			switch {
			case len(found) == 0:
				return types.Null, nil
			case len(found) == 1 || mode == "one":
				return jsonResult(found[0]), nil
			}
			arr := make([]any, len(found))
			for i, f := range found {
				arr[i] = f
			}
			return jsonResult(arr), nil
		}}, true, nil
	case "json_overlaps":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		return mk(tInt, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			x, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			y, err := jsonDocArg(name, 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			return boolVal(types.JSONOverlaps(x, y)), nil
		}, true)
	case "json_memberof":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		return mk(tInt, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg("member of", 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			return boolVal(types.JSONMemberOf(jsonValueArg(a[0], vs[0]), doc)), nil
		}, true)
	case "json_pretty":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		t := tString
		t.Tp, t.Len = mysql.TypeLongBlob, -1
		return mk(t, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := jsonDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			return types.NewString(types.JSONPretty(doc)), nil
		}, true)
	}
	return nil, false, nil
}

// castJSON is CAST(e AS JSON).
func castJSON(e Expr) Expr {
	return &closureExpr{typed: typed{tJSON}, args: []Expr{e}, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		v, err := a[0].Eval(env, row)
		if err != nil || v.IsNull() {
			return types.Null, err
		}
		if v.K == types.KindString || v.K == types.KindBytes {
			doc, err := jsonDocArg("cast_as_json", 1, a[0], v)
			if err != nil {
				return types.Null, err
			}
			return jsonResult(doc), nil
		}
		return jsonResult(jsonValueArg(a[0], v)), nil
	}}
}

// pathValuePairs compiles a function of (doc, path, value[, path, value]...) that applies each pair
// in order (JSON_SET/INSERT/REPLACE, JSON_ARRAY_APPEND/INSERT): NULL if the document or a path is
// NULL, 3149 for a wildcard path.
func (c *compiler) pathValuePairs(name string, args []Expr, apply func(doc any, p *types.JSONPath, val any) (any, error)) (Expr, error) {
	if len(args) < 3 || len(args)%2 == 0 {
		return nil, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", name)
	}
	return &closureExpr{typed: typed{tJSON}, name: name, args: args, fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		vs, _, err := evalArgs(env, row, a)
		if err != nil {
			return types.Null, err
		}
		if vs[0].IsNull() {
			return types.Null, nil
		}
		if n := argsSize(vs); n > minMaxAllowedPacket && env.resultTooLarge(name, n) {
			return types.Null, nil
		}
		doc, err := jsonDocArg(name, 1, a[0], vs[0])
		if err != nil {
			return types.Null, err
		}
		for i := 1; i < len(vs); i += 2 {
			if vs[i].IsNull() {
				return types.Null, nil
			}
			p, err := jsonPathArg(vs[i])
			if err != nil {
				return types.Null, err
			}
			if p.Wild() {
				return types.Null, errWildPath()
			}
			if doc, err = apply(doc, p, jsonValueArg(a[i+1], vs[i+1])); err != nil {
				return types.Null, err
			}
		}
		return jsonResult(doc), nil
	}}, nil
}

// evalArgs evaluates every argument of a function; null reports whether any is NULL.
func evalArgs(env *Env, row []types.Value, a []Expr) ([]types.Value, bool, error) {
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
