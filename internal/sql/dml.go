package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/expr"
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
			ok, err = dml.Update(env, s.dmlSess(), x)
		case *ast.DeleteStmt:
			ok, err = dml.Delete(env, s.dmlSess(), x)
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
