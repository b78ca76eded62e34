package dml

import (
	"errors"
	"io"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// fakeSession is a dml.Session without a facade: sql_mode is its strict flag and mode set, and
// warnings are recorded. The runners that plan (INSERT, UPDATE, DELETE, LOAD DATA) need a whole
// session and are tested from internal/sql.
type fakeSession struct {
	strict   bool
	modes    map[string]bool
	warnings []sqlerr.Warning
}

func (f *fakeSession) Plan() plan.Context                      { return nil }
func (f *fakeSession) Resolve(func(*plan.Planner) error) error { return errors.New("no planner") }
func (f *fakeSession) LockDB(string) error                     { return nil }
func (f *fakeSession) UseTable(string, string, bool) error     { return nil }
func (f *fakeSession) AddWarning(level string, code uint16, msg string) {
	f.warnings = append(f.warnings, sqlerr.Warning{Level: level, Code: code, Message: msg})
}
func (f *fakeSession) WarningCount() int                            { return len(f.warnings) }
func (f *fakeSession) SQLModeHas(flag string) bool                  { return f.modes[flag] }
func (f *fakeSession) Strict() bool                                 { return f.strict }
func (f *fakeSession) SetLastInsertID(uint64)                       {}
func (f *fakeSession) ClientFoundRows() bool                        { return false }
func (f *fakeSession) SysVar(*sysvar.Var, bool) types.Value         { return types.Null }
func (f *fakeSession) SetUserVar(string, types.Value)               {}
func (f *fakeSession) UnsetUserVar(string)                          {}
func (f *fakeSession) OpenServerFile(string) (io.ReadCloser, error) { return nil, io.EOF }
func (f *fakeSession) NextAutoInc(*expr.Env, *catalog.Table, *catalog.Column, uint64) (uint64, error) {
	return 1, nil
}
func (f *fakeSession) ObserveAutoInc(*expr.Env, *catalog.Table, *catalog.Column, uint64) error {
	return nil
}

// TestInserterNull: NULL for a NOT NULL column is error 1048 in strict mode, otherwise a warning
// and the type's implicit default, as MySQL does.
func TestInserterNull(t *testing.T) {
	col := &catalog.Column{Name: "c", Type: types.ColType{Tp: mysql.TypeLong}, NotNull: true}
	for _, strict := range []bool{true, false} {
		s := &fakeSession{strict: strict}
		ins := &Inserter{S: s, Tbl: &catalog.Table{Name: "t"}, Strict: strict}
		v, err := ins.Convert(types.Null, col)
		switch {
		case strict && !sqlerr.Is(err, sqlerr.ErrBadNull):
			t.Errorf("strict: got %v, %v; want error %d", v, err, sqlerr.ErrBadNull)
		case !strict && (err != nil || types.ToString(v) != "0" || len(s.warnings) != 1 || s.warnings[0].Code != sqlerr.ErrBadNull):
			t.Errorf("not strict: got %v, %v, warnings %v; want 0 and one warning %d", v, err, s.warnings, sqlerr.ErrBadNull)
		}
	}
}

// TestInserterDefaultValue: a NOT NULL column without a default is error 1364 in strict mode,
// otherwise a warning; a NOT NULL ENUM takes its first member in strict mode too.
func TestInserterDefaultValue(t *testing.T) {
	noDefault := &catalog.Column{Name: "c", Type: types.ColType{Tp: mysql.TypeLong}, NotNull: true}
	enum := &catalog.Column{Name: "e", Type: types.ColType{Tp: mysql.TypeEnum, Elems: []string{"x", "y"}}, NotNull: true}
	s := &fakeSession{strict: true}
	ins := &Inserter{S: s, Strict: true}
	if _, err := ins.DefaultValue(noDefault); !sqlerr.Is(err, sqlerr.ErrNoDefaultForField) {
		t.Errorf("strict, no default: got %v, want error %d", err, sqlerr.ErrNoDefaultForField)
	}
	if v, err := ins.DefaultValue(enum); err != nil || types.ToString(v) != "x" {
		t.Errorf("strict, enum: got %v, %v; want x", v, err)
	}
	ins.Strict = false
	if v, err := ins.DefaultValue(noDefault); err != nil || types.ToString(v) != "0" || len(s.warnings) != 1 {
		t.Errorf("not strict: got %v, %v, warnings %v; want 0 and one warning", v, err, s.warnings)
	}
}
