package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// runDML runs INSERT, REPLACE, UPDATE and DELETE (package dml) inside the statement scope.
func (s *Session) runDML(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) error {
	var ok proto.OK
	err := s.stmtScope(env, func() error {
		var err error
		switch x := st.(type) {
		case *ast.InsertStmt:
			ok, err = dml.Insert(env, s.dmlSess(), x)
		case *ast.UpdateStmt:
			var p *dml.Planned
			if p, err = s.dmlPlan(st); err == nil {
				ok, err = p.Update(env, s.dmlSess(), x)
			}
		case *ast.DeleteStmt:
			var p *dml.Planned
			if p, err = s.dmlPlan(st); err == nil {
				ok, err = p.Delete(env, s.dmlSess(), x)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	ok.Warnings = s.warningCount()
	s.rowCount = int64(ok.AffectedRows)
	return w.OK(ok, more)
}

// dmlPlan plans an UPDATE or DELETE, or returns the plan its prepared statement or plan-cache
// entry kept from an earlier run (prepared.dml): planning was about two fifths of the CPU of the
// UPDATEs and DELETE of sysbench's oltp_read_write (pprof, docs/benchmarks.md). A kept plan is reused only while the catalog is at the version
// it was planned on (checked under the database's metadata lock, which DDL on the table needs)
// and the default database, sql_mode and collation_connection (which the compiler reads) are the
// same; the target's metadata lock and table use are taken as planning takes them
// (dml.LookupTable). A session with temporary tables always plans: they are outside the
// catalog's version.
func (s *Session) dmlPlan(st ast.StmtNode) (*dml.Planned, error) {
	var owner *prepared
	if p := s.running; p != nil && p.stmt == st {
		owner = p
	} else if p := s.cachedStmt; p != nil && p.stmt == st {
		owner = p
	}
	if owner != nil && owner.dml != nil && s.temp == nil {
		tbl := owner.dml.Tbl
		if err := s.lockDB(tbl.DB); err != nil {
			return nil, err
		}
		if owner.dmlVer == s.catalog().Version && owner.dmlDB == s.CurDB &&
			owner.dmlMode == s.sqlModeText() && owner.dmlColl == s.connCollation() {
			if err := s.useTable(tbl.DB, tbl.Name, true); err != nil {
				return nil, err
			}
			return owner.dml, nil
		}
		owner.dml = nil
	}
	var p *dml.Planned
	var err error
	switch x := st.(type) {
	case *ast.UpdateStmt:
		p, err = dml.PlanUpdate(s.dmlSess(), x)
	case *ast.DeleteStmt:
		p, err = dml.PlanDelete(s.dmlSess(), x)
	}
	if err != nil {
		return nil, err
	}
	// Planning holds the target's metadata lock now: the catalog cannot change under the plan
	// before the version is read.
	if owner != nil && s.temp == nil && !isVirtualDB(p.Tbl.DB) && dml.Reusable(st) {
		owner.dml, owner.dmlVer, owner.dmlDB = p, s.catalog().Version, s.CurDB
		owner.dmlMode, owner.dmlColl = s.sqlModeText(), s.connCollation()
	}
	return p, nil
}

// sqlModeText is sql_mode as set (compared, not parsed: a kept plan's check).
func (s *Session) sqlModeText() string { return types.ToString(s.getSysVar(svSQLMode, false)) }
