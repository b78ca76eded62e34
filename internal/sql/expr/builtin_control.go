package expr

import (
	"math/rand/v2"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// registerControl registers control flow (IF, IFNULL, COALESCE, NULLIF), the functions of the
// session and the statement (NOW, DATABASE, USER, LAST_INSERT_ID, FOUND_ROWS...) and DATE_ADD.
func registerControl() {
	Register(Builtin{Name: "if", MinArgs: 3, MaxArgs: 3, Build: func(c *Call) (Expr, error) {
		args := c.Args
		t := UnifyTypes(args[1], args[2])
		return c.closure(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
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
			return CoerceTo(r, t), err
		})
	}})
	// IFNULL(a, b) is COALESCE(a, b).
	coalesce := Builtin{MinArgs: 1, MaxArgs: -1, Build: func(c *Call) (Expr, error) {
		t := UnifyTypes(c.Args...)
		return c.closure(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			for _, e := range a {
				v, err := e.Eval(env, row)
				if err != nil || !v.IsNull() {
					return CoerceTo(v, t), err
				}
			}
			return types.Null, nil
		})
	}}
	// GREATEST and LEAST compare their arguments (the library's function), and their result takes
	// the arguments' unified type as the branches of IF and COALESCE do: LEAST(1, 2.5) is 1.0.
	greatestLeast := Builtin{MinArgs: 2, MaxArgs: -1, Type: libraryType("greatest"), Build: func(c *Call) (Expr, error) {
		f, err := c.pure()
		if err != nil {
			return nil, err
		}
		t := f.Type()
		return c.closure(t, func(env *Env, row []types.Value, _ []Expr) (types.Value, error) {
			v, err := f.Eval(env, row)
			return CoerceTo(v, t), err
		})
	}}
	Register(alias(greatestLeast, "greatest", "least")...)
	Register(alias(coalesce, "coalesce")...)
	coalesce.MinArgs, coalesce.MaxArgs = 2, 2
	Register(alias(coalesce, "ifnull")...)
	Register(Builtin{Name: "nullif", MinArgs: 2, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		args := c.Args
		coll := c.collationOf(args...)
		return c.closure(args[0].Type(), func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
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
	}})
	Register(Builtin{Name: "isnull", MinArgs: 1, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		args := c.Args
		return &IsNull{Typed: Typed{T: TBool}, E: args[0], Not: false}, nil
	}})
	Register(alias(Builtin{MinArgs: 0, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		args := c.Args
		fsp := c.constIntArg(args, 0)
		t := TDT
		t.Frac = fsp
		return c.closure(t, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return TimeValue(env.Now(), fsp), nil
		})
	}}, "now", "current_timestamp", "localtime", "localtimestamp", "sysdate")...)
	Register(alias(Builtin{MinArgs: 0, MaxArgs: 0, Type: fixed(TDate), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			n := env.Now()
			return types.NewDate(types.PackTime(n.Year(), int(n.Month()), n.Day(), 0, 0, 0, 0)), nil
		})
	}}, "curdate", "current_date")...)
	Register(Builtin{Name: "unix_timestamp", MinArgs: 0, MaxArgs: 1, Build: func(c *Call) (Expr, error) {
		args := c.Args
		if len(args) == 0 {
			return c.closure(TInt, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
				return types.NewInt(env.Now().Unix()), nil
			})
		}
		// A fractional argument gives a DECIMAL with its digits (UNIX_TIMESTAMP('... 00:00:00.5')).
		fsp := ExprFsp(args[0])
		if t := args[0].Type(); IsIntType(t) || t.Tp == mysql.TypeNewDecimal {
			fsp = min(max(t.Frac, 0), 6)
			if IsIntType(t) {
				fsp = 0
			}
		}
		t := TInt
		if fsp > 0 {
			t = TDecimal
			t.Frac = fsp
		}
		return c.closure(t, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
			v, err := a[0].Eval(env, row)
			if err != nil || v.IsNull() {
				return types.Null, err
			}
			dt := TDT
			dt.Frac = fsp
			tv, _, err := types.Convert(v, &dt, types.ConvertCtx{})
			if err != nil {
				return types.NewInt(0), nil
			}
			y, mo, d, h, mi, s, us := types.UnpackTime(tv.I)
			sec := time.Date(y, time.Month(mo), d, h, mi, s, 0, env.Sess.Location()).Unix()
			if sec < 0 || sec > MaxUnixTime {
				sec, us = 0, 0
			}
			if fsp == 0 {
				return types.NewInt(sec), nil
			}
			return types.NewDecimal(decimal.New(sec*1e6+int64(us), -6), fsp), nil
		})
	}})
	Register(alias(Builtin{MinArgs: 0, MaxArgs: 0, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			if env.Sess.CurrentDB() == "" {
				return types.Null, nil
			}
			return types.NewString(env.Sess.CurrentDB()), nil
		})
	}}, "database", "schema")...)
	Register(Builtin{Name: "version", MinArgs: 0, MaxArgs: 0, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(env.Sess.ServerVersion()), nil
		})
	}})
	Register(Builtin{Name: "connection_id", MinArgs: 0, MaxArgs: 0, Type: fixed(TUint), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewUint(uint64(env.Sess.ConnectionID())), nil
		})
	}})
	Register(alias(Builtin{MinArgs: 0, MaxArgs: 0, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(env.Sess.LoginUser()), nil
		})
	}}, "user", "session_user", "system_user")...)
	Register(Builtin{Name: "current_user", MinArgs: 0, MaxArgs: 0, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		// The account the login matched (its host pattern), not the login itself.
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(env.Sess.CurrentUser()), nil
		})
	}})
	Register(Builtin{Name: "last_insert_id", MinArgs: 0, MaxArgs: 1, Type: fixed(TUint), Build: func(c *Call) (Expr, error) {
		args := c.Args
		if len(args) == 1 {
			return c.closure(c.Type, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
				v, err := a[0].Eval(env, row)
				if err != nil || v.IsNull() {
					return v, err
				}
				env.Sess.SetLastInsertID(ToUint64(v))
				return types.NewUint(env.Sess.LastInsertID()), nil
			})
		}
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewUint(env.Sess.LastInsertID()), nil
		})
	}})
	Register(Builtin{Name: "row_count", MinArgs: 0, MaxArgs: 0, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewInt(env.Sess.RowCount()), nil
		})
	}})
	Register(Builtin{Name: "found_rows", MinArgs: 0, MaxArgs: 0, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewInt(env.Sess.FoundRows()), nil
		})
	}})
	Register(Builtin{Name: "rand", MinArgs: 0, MaxArgs: 1, Type: fixed(TDouble), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewFloat(rand.Float64()), nil
		})
	}})
	Register(Builtin{Name: "uuid", MinArgs: 0, MaxArgs: 0, Type: fixed(TString), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, _ []types.Value, _ []Expr) (types.Value, error) {
			return types.NewString(NewUUID()), nil
		})
	}})
	Register(Builtin{Name: "sleep", MinArgs: 1, MaxArgs: 1, Type: fixed(TInt), Build: func(c *Call) (Expr, error) {
		return c.closure(c.Type, func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
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
			case <-env.Ctx.Done():
				return types.NewInt(1), nil
			}
		})
	}})
	Register(alias(Builtin{MinArgs: 2, MaxArgs: 2, Build: func(c *Call) (Expr, error) {
		return c.dateArith(c.Name == "date_sub" || c.Name == "subdate")
	}}, "date_add", "adddate", "date_sub", "subdate")...)
}

// constIntArg is args[i] when it is an integer constant (a fractional-seconds precision), else 0.
func (c *Call) constIntArg(args []Expr, i int) int {
	if i < len(args) {
		if k, ok := args[i].(*Const); ok {
			return int(types.ToIntLenient(k.V))
		}
	}
	return 0
}

// dateArith is DATE_ADD / DATE_SUB and their synonyms: the date plus (minus) INTERVAL n unit.
func (c *Call) dateArith(sub bool) (Expr, error) {
	if c.Unit == "" {
		return nil, sqlerr.New(sqlerr.ErrNotSupportedYet, "unsupported %s unit", c.Written)
	}
	unit := c.Unit
	return &Closure{Typed: Typed{T: TDT}, Args: c.Args, Fn: func(env *Env, row []types.Value, a []Expr) (types.Value, error) {
		d, err := a[0].Eval(env, row)
		if err != nil || d.IsNull() {
			return types.Null, err
		}
		n, err := a[1].Eval(env, row)
		if err != nil || n.IsNull() {
			return types.Null, err
		}
		return AddInterval(d, n, unit, sub)
	}}, nil
}

// closure is an expression of type t evaluated by fn over the call's arguments.
func (c *Call) closure(t types.ColType, fn func(env *Env, row []types.Value, args []Expr) (types.Value, error)) (Expr, error) {
	return &Closure{Typed: Typed{T: t}, Args: c.Args, Fn: fn}, nil
}

// named is closure with the function's name set, so that a string result past
// max_allowed_packet becomes NULL with warning 1301.
func (c *Call) named(t types.ColType, fn func(env *Env, row []types.Value, args []Expr) (types.Value, error)) (Expr, error) {
	return &Closure{Typed: Typed{T: t}, Name: c.Name, Args: c.Args, Fn: fn}, nil
}
