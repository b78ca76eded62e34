package expr

import (
	"context"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// TestRegistryEntries checks the table's invariants: bounds in order, a constructor for each entry,
// and every function of the builtins library registered (a library function no entry defines
// would otherwise be unreachable).
func TestRegistryEntries(t *testing.T) {
	for _, name := range BuiltinNames() {
		b, _ := LookupBuiltin(name)
		if b.Name != name || b.Build == nil || b.MinArgs < 0 || (b.MaxArgs >= 0 && b.MaxArgs < b.MinArgs) || b.ArgStep < 1 {
			t.Errorf("entry %q: %+v", name, *b)
		}
	}
	for _, name := range builtins.FuncNames() {
		if _, ok := LookupBuiltin(name); !ok {
			t.Errorf("library function %s is not registered", name)
		}
	}
}

// TestAcceptsArgs is the arity rule, table-driven over the kinds of entry.
func TestAcceptsArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   []int
		bad  []int
	}{
		{"if", []int{3}, []int{0, 2, 4}},
		{"coalesce", []int{1, 2, 9}, []int{0}},
		{"ifnull", []int{2}, []int{1, 3}},
		{"now", []int{0, 1}, []int{2}},
		{"json_object", []int{0, 2, 4}, []int{1, 3}},
		{"json_set", []int{3, 5, 7}, []int{1, 2, 4, 6}},
		{"json_depth", []int{1}, []int{0, 2}},
		{"json_length", []int{1, 2}, []int{0, 3}},
		{"regexp_replace", []int{3, 6}, []int{2, 7}},
		{"concat", []int{1, 5}, []int{0}},
	} {
		b, ok := LookupBuiltin(tc.name)
		if !ok {
			t.Fatalf("%s is not registered", tc.name)
		}
		for _, n := range tc.ok {
			if !b.AcceptsArgs(n) {
				t.Errorf("%s refuses %d arguments", tc.name, n)
			}
		}
		for _, n := range tc.bad {
			if b.AcceptsArgs(n) {
				t.Errorf("%s accepts %d arguments", tc.name, n)
			}
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	Register(Builtin{Name: "concat", Build: (*Call).pure})
}

// fakeSession is a Session without the facade: expressions need nothing else.
type fakeSession struct {
	warnings []string
	lastID   uint64
	vars     map[string]types.Value
}

func (f *fakeSession) AddWarning(_ string, _ uint16, msg string) {
	f.warnings = append(f.warnings, msg)
}
func (f *fakeSession) SysVar(v *sysvar.Var, _ bool) types.Value { return v.Default }
func (f *fakeSession) SQLModeHas(string) bool                   { return false }
func (f *fakeSession) Location() *time.Location                 { return time.UTC }
func (f *fakeSession) DefaultWeekFormat() int                   { return 0 }
func (f *fakeSession) UserVar(name string) types.Value          { return f.vars[name] }
func (f *fakeSession) SetUserVar(name string, v types.Value)    { f.vars[name] = v }
func (f *fakeSession) LastInsertID() uint64                     { return f.lastID }
func (f *fakeSession) SetLastInsertID(id uint64)                { f.lastID = id }
func (f *fakeSession) RowCount() int64                          { return 0 }
func (f *fakeSession) FoundRows() int64                         { return 0 }
func (f *fakeSession) ConnectionID() uint32                     { return 7 }
func (f *fakeSession) CurrentDB() string                        { return "db1" }
func (f *fakeSession) LoginUser() string                        { return "u@h" }
func (f *fakeSession) CurrentUser() string                      { return "u@%" }
func (f *fakeSession) ServerVersion() string                    { return "8.0.0-test" }
func (f *fakeSession) NewMemTracker() *memory.Tracker           { return nil }

// TestBindAndEvalWithoutFacade binds calls through the registry and evaluates them against a fake
// session: the session functions read it through the interface, a division by zero warns through
// it, and arity errors name the function as written.
func TestBindAndEvalWithoutFacade(t *testing.T) {
	s := &fakeSession{vars: map[string]types.Value{}}
	env := &Env{Sess: s, Ctx: context.Background()}
	k := func(i int64) Expr { return NewConst(types.NewInt(i)) }
	for _, tc := range []struct {
		name string
		args []Expr
		want string
	}{
		{"database", nil, "db1"},
		{"connection_id", nil, "7"},
		{"current_user", nil, "u@%"},
		{"last_insert_id", []Expr{k(42)}, "42"},
		{"last_insert_id", nil, "42"},
		{"if", []Expr{k(0), k(1), k(2)}, "2"},
		{"coalesce", []Expr{NewConst(types.Null), k(3)}, "3"},
		{"concat", []Expr{k(1), k(2)}, "12"},
	} {
		e, err := BindBuiltin(&Call{Name: tc.name, Written: tc.name, Args: tc.args})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		v, err := e.Eval(env, nil)
		if err != nil || types.ToString(v) != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.name, types.ToString(v), err, tc.want)
		}
	}
	if s.lastID != 42 {
		t.Errorf("LAST_INSERT_ID(42) left %d", s.lastID)
	}
	div := &Arith{Typed: Typed{T: TDecimal}, Op: opcode.Div, L: k(1), R: k(0)}
	if v, err := div.Eval(env, nil); err != nil || !v.IsNull() || len(s.warnings) != 1 || s.warnings[0] != "Division by 0" {
		t.Errorf("1/0 = %v, %v; warnings %q", v, err, s.warnings)
	}
	_, err := BindBuiltin(&Call{Name: "database", Written: "DataBase", Args: []Expr{k(1)}})
	if e := sqlerr.As(err); err == nil || e.Code != sqlerr.ErrWrongParamCount ||
		e.Message != "Incorrect parameter count in the call to native function 'DataBase'" {
		t.Errorf("DataBase(1): %v", err)
	}
}
