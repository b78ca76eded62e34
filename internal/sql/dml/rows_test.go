package dml

import (
	"errors"
	"io"
	"slices"
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

// autoSession hands out auto-increment ids from a counter and records each request's size.
type autoSession struct {
	fakeSession
	next     uint64
	requests []uint64
}

func (a *autoSession) NextAutoInc(_ *expr.Env, _ *catalog.Table, _ *catalog.Column, n uint64) (uint64, error) {
	a.requests = append(a.requests, n)
	id := a.next
	a.next += n
	return id, nil
}

// TestInserterReserveAuto: the rows of a multi-row INSERT that all take an auto-increment id get
// them from one request to the counter (reserveAuto), consecutive; a row beyond the reservation
// (or a single-row statement) asks the counter itself.
func TestInserterReserveAuto(t *testing.T) {
	id := &catalog.Column{Name: "id", Type: types.ColType{Tp: mysql.TypeLonglong, Unsigned: true}, NotNull: true, AutoInc: true}
	tbl := &catalog.Table{Name: "t", Columns: []*catalog.Column{id}, AutoIncCol: 0}
	s := &autoSession{next: 10}
	ins := &Inserter{S: s, Tbl: tbl, Strict: true}
	if err := ins.reserveAuto(3); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 4 {
		row := []types.Value{types.Null}
		if err := ins.FillAuto(row, []bool{false}); err != nil {
			t.Fatal(err)
		}
		got = append(got, types.ToString(row[0]))
	}
	if want := []string{"10", "11", "12", "13"}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if want := []uint64{3, 1}; !slices.Equal(s.requests, want) {
		t.Errorf("counter requests %v, want %v", s.requests, want)
	}
	one := &autoSession{next: 1}
	ins = &Inserter{S: one, Tbl: tbl, Strict: true}
	if err := ins.reserveAuto(1); err != nil || len(one.requests) != 0 {
		t.Errorf("one row: reserved %v, %v; want no reservation", one.requests, err)
	}
}
