package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
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
func (p *planSession) IsVirtualDB(db string) bool             { return isVirtualDB(db) }
func (p *planSession) CurrentDB() string                      { return p.CurDB }
func (p *planSession) SetCurrentDB(db string)                 { p.CurDB = db }
func (p *planSession) Catalog() *catalog.Catalog              { return p.sess().catalog() }
func (p *planSession) LockDB(db string) error                 { return p.sess().lockDB(db) }
func (p *planSession) UseTable(db, name string, w bool) error { return p.sess().useTable(db, name, w) }
func (p *planSession) FullGroupBy() bool                      { return p.sess().sqlModeHas("ONLY_FULL_GROUP_BY") }
func (p *planSession) ConnCollation() *types.Collation        { return p.sess().connCollation() }
func (p *planSession) EnterExpr() error                       { return p.sess().enterExpr() }
func (p *planSession) LeaveExpr()                             { p.sess().leaveExpr() }

func (p *planSession) LookupUserVar(name string) (types.Value, bool) {
	v, ok := p.userVars[name]
	return v, ok
}

func (p *planSession) ParseSQL(sql string) ([]ast.StmtNode, error) {
	stmts, _, err := p.parser.ParseSQL(sql)
	return stmts, err
}
