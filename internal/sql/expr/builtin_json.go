package expr

import (
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// registerJSON registers the JSON functions (json.go holds their argument and result helpers).
func registerJSON() {
	Register(Builtin{Name: "json_extract", MinArgs: 2, MaxArgs: -1, Type: fixed(TJSON), Build: func(c *Call) (Expr, error) {
		name := c.Name
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			var found []any
			wrap := len(vs) > 2
			for _, pv := range vs[1:] {
				p, err := JSONPathArg(pv)
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
				return JSONResult(found[0]), nil
			}
			return JSONResult(found), nil
		}, true)
	}})
	Register(Builtin{Name: "json_unquote", MinArgs: 1, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		t := TString
		t.Len = -1
		t.Tp = mysql.TypeLongBlob
		return c.jsonFn(t, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			s := types.ToString(vs[0])
			if IsJSONType(a[0].Type()) || (len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"') {
				doc, err := types.ParseJSON(s)
				if err != nil {
					if IsJSONType(a[0].Type()) {
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
	}})
	Register(Builtin{Name: "json_quote", MinArgs: 1, MaxArgs: 1, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(types.JSONText(types.ToString(vs[0]))), nil
		}, true)
	}})
	Register(Builtin{Name: "json_object", MinArgs: 0, MaxArgs: -1, ArgStep: 2, Type: fixed(TJSON), Build: func(c *Call) (Expr, error) {
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			m := map[string]any{}
			for i := 0; i < len(vs); i += 2 {
				if vs[i].IsNull() {
					return types.Null, sqlerr.New(sqlerr.ErrJSONNullMemberName, "JSON documents may not contain NULL member names.")
				}
				m[types.ToString(vs[i])] = JSONValueArg(a[i+1], vs[i+1])
			}
			return JSONResult(m), nil
		}, false)
	}})
	Register(Builtin{Name: "json_array", MinArgs: 0, MaxArgs: -1, Type: fixed(TJSON), Build: func(c *Call) (Expr, error) {
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			arr := make([]any, len(vs))
			for i := range vs {
				arr[i] = JSONValueArg(a[i], vs[i])
			}
			return JSONResult(arr), nil
		}, false)
	}})
	Register(Builtin{Name: "json_valid", MinArgs: 1, MaxArgs: 1, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			if IsJSONType(a[0].Type()) {
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
	}})
	Register(Builtin{Name: "json_type", MinArgs: 1, MaxArgs: 1, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		name := c.Name
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			return types.NewString(types.JSONTypeName(doc)), nil
		}, true)
	}})
	// JSON_LENGTH and JSON_KEYS take an optional path; JSON_DEPTH does not.
	lengthKeysDepth := Builtin{MinArgs: 1, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		name := c.Name
		t := TInt
		if name == "json_keys" {
			t = TJSON
		}
		return c.jsonFn(t, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			if len(vs) > 1 {
				p, err := JSONPathArg(vs[1])
				if err != nil {
					return types.Null, err
				}
				if p.Wild() {
					return types.Null, ErrWildPath()
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
			return JSONResult(keys), nil
		}, true)
	}}
	Register(alias(lengthKeysDepth, "json_length", "json_keys")...)
	lengthKeysDepth.MaxArgs = 1
	Register(alias(lengthKeysDepth, "json_depth")...)
	Register(Builtin{Name: "json_contains", MinArgs: 2, MaxArgs: 3, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		name := c.Name
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			cand, err := JSONDocArg(name, 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			if len(vs) > 2 {
				p, err := JSONPathArg(vs[2])
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
	}})
	Register(Builtin{Name: "json_contains_path", MinArgs: 3, MaxArgs: -1, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		name := c.Name
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			mode := strings.ToLower(types.ToString(vs[1]))
			if mode != "one" && mode != "all" {
				return types.Null, sqlerr.New(sqlerr.ErrJSONBadOneOrAllArg, "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.")
			}
			for _, pv := range vs[2:] {
				p, err := JSONPathArg(pv)
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
	}})
	Register(alias(Builtin{MinArgs: 3, MaxArgs: -1, ArgStep: 2, Build: func(c *Call) (Expr, error) {
		name, args := c.Name, c.Args
		mode := map[string]types.JSONModify{"json_set": types.JSONSet, "json_insert": types.JSONInsert, "json_replace": types.JSONReplace}[name]
		e, err := c.pathValuePairs(name, args, func(doc any, p *types.JSONPath, val any) (any, error) {
			return p.Modify(doc, val, mode), nil
		})
		return e, err
	}}, "json_set", "json_insert", "json_replace")...)
	Register(Builtin{Name: "json_remove", MinArgs: 2, MaxArgs: -1, Type: fixed(TJSON), Build: func(c *Call) (Expr, error) {
		name := c.Name
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			for _, pv := range vs[1:] {
				p, err := JSONPathArg(pv)
				if err != nil {
					return types.Null, err
				}
				if p.Wild() {
					return types.Null, ErrWildPath()
				}
				if p.String() == "$" {
					return types.Null, sqlerr.New(sqlerr.ErrInvalidJSONPath, "Invalid JSON path expression. The error is around character position 1.")
				}
				doc = p.Remove(doc)
			}
			return JSONResult(doc), nil
		}, true)
	}})
	Register(alias(Builtin{MinArgs: 2, MaxArgs: -1, Type: fixed(TJSON), Build: func(c *Call) (Expr, error) {
		name := c.Name
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			var doc any
			for i := range vs {
				d, err := JSONDocArg(name, i+1, a[i], vs[i])
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
			return JSONResult(doc), nil
		}, true)
	}}, "json_merge_patch", "json_merge_preserve", "json_merge")...)
	Register(alias(Builtin{MinArgs: 3, MaxArgs: -1, ArgStep: 2, Build: func(c *Call) (Expr, error) {
		name, args := c.Name, c.Args
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
		return e, err
	}}, "json_array_append", "json_array_insert")...)
	Register(Builtin{Name: "json_search", MinArgs: 3, MaxArgs: -1, Build: func(c *Call) (Expr, error) {
		name, args := c.Name, c.Args
		return &Closure{Typed: Typed{T: TJSON}, Name: name, Args: args, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			vs, _, err := EvalArgs(env, row, a)
			if err != nil {
				return types.Null, err
			}
			for i, v := range vs {
				if v.IsNull() && i != 3 {
					return types.Null, nil
				}
			}
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
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
				p, err := JSONPathArg(pv)
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
				return JSONResult(found[0]), nil
			}
			arr := make([]any, len(found))
			for i, f := range found {
				arr[i] = f
			}
			return JSONResult(arr), nil
		}}, nil
	}})
	Register(Builtin{Name: "json_overlaps", MinArgs: 2, MaxArgs: 2, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		name := c.Name
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			x, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			y, err := JSONDocArg(name, 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			return BoolVal(types.JSONOverlaps(x, y)), nil
		}, true)
	}})
	Register(Builtin{Name: "json_memberof", MinArgs: 2, MaxArgs: 2, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		return c.jsonFn(c.Type, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg("member of", 2, a[1], vs[1])
			if err != nil {
				return types.Null, err
			}
			return BoolVal(types.JSONMemberOf(JSONValueArg(a[0], vs[0]), doc)), nil
		}, true)
	}})
	Register(Builtin{Name: "json_pretty", MinArgs: 1, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		name := c.Name
		t := TString
		t.Tp, t.Len = mysql.TypeLongBlob, -1
		return c.jsonFn(t, func(_ *Env, vs []types.Value, a []Expr) (types.Value, error) {
			doc, err := JSONDocArg(name, 1, a[0], vs[0])
			if err != nil {
				return types.Null, err
			}
			return types.NewString(types.JSONPretty(doc)), nil
		}, true)
	}})
}

// jsonFn is a JSON function of the call's evaluated arguments: NULL when one is NULL and
// nullIfAnyNull says so; a builder (JSON_ARRAY, JSON_OBJECT...) refuses to build a result past
// max_allowed_packet before it builds it.
func (c *Call) jsonFn(t types.ColType, f func(env *Env, vs []types.Value, a []Expr) (types.Value, error), nullIfAnyNull bool) (Expr, error) {
	name := c.Name
	builds := JSONBuilders[name]
	return &Closure{Typed: Typed{T: t}, Name: name, Args: c.Args, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		vs, null, err := EvalArgs(env, row, a)
		if err != nil {
			return types.Null, err
		}
		if null && nullIfAnyNull {
			return types.Null, nil
		}
		// A builder's result holds its arguments: refuse before building one that cannot fit.
		if builds {
			if n := ArgsSize(vs); n > MinMaxAllowedPacket && env.ResultTooLarge(name, n) {
				return types.Null, nil
			}
		}
		return f(env, vs, a)
	}}, nil
}

// pathValuePairs compiles a function of (doc, path, value[, path, value]...) that applies each pair
// in order (JSON_SET/INSERT/REPLACE, JSON_ARRAY_APPEND/INSERT): NULL if the document or a path is
// NULL, 3149 for a wildcard path.
func (c *Call) pathValuePairs(name string, args []Expr, apply func(doc any, p *types.JSONPath, val any) (any, error)) (Expr, error) {
	return &Closure{Typed: Typed{T: TJSON}, Name: name, Args: args, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		vs, _, err := EvalArgs(env, row, a)
		if err != nil {
			return types.Null, err
		}
		if vs[0].IsNull() {
			return types.Null, nil
		}
		if n := ArgsSize(vs); n > MinMaxAllowedPacket && env.ResultTooLarge(name, n) {
			return types.Null, nil
		}
		doc, err := JSONDocArg(name, 1, a[0], vs[0])
		if err != nil {
			return types.Null, err
		}
		for i := 1; i < len(vs); i += 2 {
			if vs[i].IsNull() {
				return types.Null, nil
			}
			p, err := JSONPathArg(vs[i])
			if err != nil {
				return types.Null, err
			}
			if p.Wild() {
				return types.Null, ErrWildPath()
			}
			if doc, err = apply(doc, p, JSONValueArg(a[i+1], vs[i+1])); err != nil {
				return types.Null, err
			}
		}
		return JSONResult(doc), nil
	}}, nil
}
