package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// planSession is the session as the planner sees it (its plan.Context): a defined type over Session,
// so the planner's exported methods do not join Session's own API, and converting a *Session to it
// costs nothing (no adapter is allocated per statement).
type planSession Session

// planContext returns the session as the planner's plan.Context.
func (s *Session) planContext() *planSession { return (*planSession)(s) }

func (p *planSession) sess() *Session { return (*Session)(p) }

func (p *planSession) VirtualTable(db, name string) (*exec.Select, bool) {
	return p.sess().virtualTable(db, name)
}
func (p *planSession) IsVirtualDB(db string) bool      { return isVirtualDB(db) }
func (p *planSession) CurrentDB() string               { return p.CurDB }
func (p *planSession) SetCurrentDB(db string)          { p.CurDB = db }
func (p *planSession) Catalog() *catalog.Catalog       { return p.sess().catalog() }
func (p *planSession) FullGroupBy() bool               { return p.sess().sqlModeHas("ONLY_FULL_GROUP_BY") }
func (p *planSession) ConnCollation() *types.Collation { return p.sess().connCollation() }
func (p *planSession) EnterExpr() error                { return p.sess().enterExpr() }
func (p *planSession) LeaveExpr()                      { p.sess().leaveExpr() }

func (p *planSession) LookupUserVar(name string) (types.Value, bool) {
	v, ok := p.userVars[name]
	return v, ok
}

// resolve runs build's planning calls and takes the metadata locks of what they resolved
// (plan.Resolve): every planning call of a statement goes through it, since the planner takes no
// lock itself. If DDL changed what was resolved before the locks were held, build runs again.
func (s *Session) resolve(build func(p *plan.Planner) error) error {
	u := &s.uses
	if s.resolving {
		// Planning inside planning (a view's columns for information_schema, reached from the
		// planner through VirtualTable): a record of its own.
		u = &plan.Uses{}
	} else {
		s.resolving = true
		defer func() { s.resolving = false }()
	}
	p := &plan.Planner{Ctx: s.planContext(), Uses: u}
	return plan.Resolve(p.Ctx, u, s.lockUses, func() error { return build(p) })
}

// lockUses takes the metadata locks of what planning resolved, in resolution order: each
// database's shared lock (before its definitions are trusted), then the use of each base table or
// view (checked against LOCK TABLES, waiting for another session's table locks).
func (s *Session) lockUses(uses []plan.TableUse) error {
	if s.temp != nil {
		if err := s.checkTempUses(uses); err != nil {
			return err
		}
	}
	for i := range uses {
		u := &uses[i]
		if u.Table != nil && catalog.IsTempID(u.Table.ID) {
			continue // the session's own temporary table: no other session can reach it
		}
		if err := s.lockDB(u.DB); err != nil {
			return err
		}
		var err error
		switch {
		case u.Table != nil:
			err = s.useTable(u.Table.DB, u.Table.Name, false)
		case u.View != nil:
			err = s.useTable(u.View.DB, u.View.Name, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// compileExpr compiles an expression outside any table's scope (SET, DO, EXECUTE ... USING),
// taking the locks of the tables its subqueries read.
func (s *Session) compileExpr(n ast.ExprNode) (expr.Expr, error) {
	var e expr.Expr
	err := s.resolve(func(p *plan.Planner) (err error) {
		e, err = p.NewCompiler(&plan.Scope{}).Compile(n)
		return err
	})
	return e, err
}

func (p *planSession) ParseSQL(sql string) ([]ast.StmtNode, error) {
	sql, err := p.sess().rewriteJSONTable(sql) // a view's body may hold JSON_TABLE
	if err != nil {
		return nil, err
	}
	return parseSQL(p.parser, sql)
}
