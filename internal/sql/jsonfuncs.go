package sql

import (
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// JSON functions. A JSON value travels as a KindString holding MySQL's normalized text, and an
// expression whose static type is TypeJSON is known to hold one: that is how JSON_OBJECT('a',
// j) embeds j's document while JSON_OBJECT('a', 'x') embeds the string "x".

// jsonFunc compiles a JSON function, or returns ok=false if name is not one.
func (c *compiler) jsonFunc(name string, args []expr.Expr) (expr.Expr, bool, error) {
	argc := func(lo, hi int) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", name)
		}
		return nil
	}
	mk := func(t types.ColType, f func(env *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error), nullIfAnyNull bool) (expr.Expr, bool, error) {
		builds := expr.JSONBuilders[name]
		return &expr.Closure{Typed: expr.Typed{T: t}, Name: name, Args: args, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			vs, null, err := expr.EvalArgs(env, row, a)
			if err != nil {
				return types.Null, err
			}
			if null && nullIfAnyNull {
				return types.Null, nil
			}
			// A builder's result holds its arguments: refuse before building one that cannot fit.
			if builds {
				if n := expr.ArgsSize(vs); n > expr.MinMaxAllowedPacket && env.ResultTooLarge(name, n) {
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
		return mk(expr.TJSON, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			var found []any
			wrap := len(vs) > 2
			for _, pv := range vs[1:] {
				p, err := expr.JSONPathArg(pv)
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
				return expr.JSONResult(found[0]), nil
			}
			return expr.JSONResult(found), nil
		}, true)
	case "json_unquote":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		t := expr.TString
		t.Len = -1
		t.Tp = mysql.TypeLongBlob
		return mk(t, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			s := types.ToString(vs[0])
			if expr.IsJSONType(a[0].Type()) || (len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"') {
				doc, err := types.ParseJSON(s)
				if err != nil {
					if expr.IsJSONType(a[0].Type()) {
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
		return mk(expr.TString, func(_ *expr.Env, vs []types.Value, _ []expr.Expr) (types.Value, error) {
			return types.NewString(types.JSONText(types.ToString(vs[0]))), nil
		}, true)
	case "json_object":
		if len(args)%2 != 0 {
			return nil, true, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", name)
		}
		return mk(expr.TJSON, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			m := map[string]any{}
			for i := 0; i < len(vs); i += 2 {
				if vs[i].IsNull() {
					return types.Null, sqlerr.New(sqlerr.ErrJSONNullMemberName, "JSON documents may not contain NULL member names.")
				}
				m[types.ToString(vs[i])] = expr.JSONValueArg(a[i+1], vs[i+1])
			}
			return expr.JSONResult(m), nil
		}, false)
	case "json_array":
		return mk(expr.TJSON, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			arr := make([]any, len(vs))
			for i := range vs {
				arr[i] = expr.JSONValueArg(a[i], vs[i])
			}
			return expr.JSONResult(arr), nil
		}, false)
	case "json_valid":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return mk(expr.TInt, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			if expr.IsJSONType(a[0].Type()) {
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
		return mk(expr.TString, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
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
		t := expr.TInt
		if name == "json_keys" {
			t = expr.TJSON
		}
		return mk(t, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			if len(vs) > 1 {
				p, err := expr.JSONPathArg(vs[1])
				if err != nil {
					return types.Null, err
				}
				if p.Wild() {
					return types.Null, expr.ErrWildPath()
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
			return expr.JSONResult(keys), nil
		}, true)
	case "json_contains":
		if err := argc(2, 3); err != nil {
			return nil, true, err
		}
		return mk(expr.TInt, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			cand, err := expr.JSONDocArg(name, 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			if len(vs) > 2 {
				p, err := expr.JSONPathArg(vs[2])
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
		return mk(expr.TInt, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			mode := strings.ToLower(types.ToString(vs[1]))
			if mode != "one" && mode != "all" {
				return types.Null, sqlerr.New(sqlerr.ErrJSONBadOneOrAllArg, "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.")
			}
			for _, pv := range vs[2:] {
				p, err := expr.JSONPathArg(pv)
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
		return mk(expr.TJSON, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			for _, pv := range vs[1:] {
				p, err := expr.JSONPathArg(pv)
				if err != nil {
					return types.Null, err
				}
				if p.Wild() {
					return types.Null, expr.ErrWildPath()
				}
				if p.String() == "$" {
					return types.Null, sqlerr.New(sqlerr.ErrInvalidJSONPath, "Invalid JSON path expression. The error is around character position 1.")
				}
				doc = p.Remove(doc)
			}
			return expr.JSONResult(doc), nil
		}, true)
	case "json_merge_patch", "json_merge_preserve", "json_merge":
		if err := argc(2, -1); err != nil {
			return nil, true, err
		}
		return mk(expr.TJSON, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			var doc any
			for i := range vs {
				d, err := expr.JSONDocArg(name, i+1, a[i], vs[i])
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
			return expr.JSONResult(doc), nil
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
		return &expr.Closure{Typed: expr.Typed{T: expr.TJSON}, Name: name, Args: args, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
			vs, _, err := expr.EvalArgs(env, row, a)
			if err != nil {
				return types.Null, err
			}
			for i, v := range vs {
				if v.IsNull() && i != 3 {
					return types.Null, nil
				}
			}
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
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
				p, err := expr.JSONPathArg(pv)
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
				return expr.JSONResult(found[0]), nil
			}
			arr := make([]any, len(found))
			for i, f := range found {
				arr[i] = f
			}
			return expr.JSONResult(arr), nil
		}}, true, nil
	case "json_overlaps":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		return mk(expr.TInt, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			x, err := expr.JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			y, err := expr.JSONDocArg(name, 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			return expr.BoolVal(types.JSONOverlaps(x, y)), nil
		}, true)
	case "json_memberof":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		return mk(expr.TInt, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg("member of", 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			return expr.BoolVal(types.JSONMemberOf(expr.JSONValueArg(a[0], vs[0]), doc)), nil
		}, true)
	case "json_pretty":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		t := expr.TString
		t.Tp, t.Len = mysql.TypeLongBlob, -1
		return mk(t, func(_ *expr.Env, vs []types.Value, a []expr.Expr) (types.Value, error) {
			doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			return types.NewString(types.JSONPretty(doc)), nil
		}, true)
	}
	return nil, false, nil
}

// pathValuePairs compiles a function of (doc, path, value[, path, value]...) that applies each pair
// in order (JSON_SET/INSERT/REPLACE, JSON_ARRAY_APPEND/INSERT): NULL if the document or a path is
// NULL, 3149 for a wildcard path.
func (c *compiler) pathValuePairs(name string, args []expr.Expr, apply func(doc any, p *types.JSONPath, val any) (any, error)) (expr.Expr, error) {
	if len(args) < 3 || len(args)%2 == 0 {
		return nil, c.errf(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", name)
	}
	return &expr.Closure{Typed: expr.Typed{T: expr.TJSON}, Name: name, Args: args, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
		vs, _, err := expr.EvalArgs(env, row, a)
		if err != nil {
			return types.Null, err
		}
		if vs[0].IsNull() {
			return types.Null, nil
		}
		if n := expr.ArgsSize(vs); n > expr.MinMaxAllowedPacket && env.ResultTooLarge(name, n) {
			return types.Null, nil
		}
		doc, err := expr.JSONDocArg(name, 1, a[0], vs[0])
		if err != nil {
			return types.Null, err
		}
		for i := 1; i < len(vs); i += 2 {
			if vs[i].IsNull() {
				return types.Null, nil
			}
			p, err := expr.JSONPathArg(vs[i])
			if err != nil {
				return types.Null, err
			}
			if p.Wild() {
				return types.Null, expr.ErrWildPath()
			}
			if doc, err = apply(doc, p, expr.JSONValueArg(a[i+1], vs[i+1])); err != nil {
				return types.Null, err
			}
		}
		return expr.JSONResult(doc), nil
	}}, nil
}
