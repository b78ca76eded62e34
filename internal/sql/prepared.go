package sql

import (
	"context"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// maxParams is the protocol's limit on placeholders in one statement.
const maxParams = 65535

// prepared is a server-side prepared statement. A SELECT keeps its plan, re-planned only when the
// catalog changes, so executions neither parse nor plan.
type prepared struct {
	id      uint32
	stmt    ast.StmtNode
	nParams int
	plan    *exec.Select
	planVer uint64
	planDB  string
	tables  []plan.TableUse // what the plan resolved: locked again (lockUses) before each run
	// dml is an UPDATE or DELETE's plan (dml.Reusable statements only), run again while the
	// catalog version, default database, sql_mode and collation_connection are those it was
	// planned under (dmlPlan, dml.go).
	dml     *dml.Planned
	dmlVer  uint64
	dmlDB   string
	dmlMode string
	dmlColl *types.Collation
}

// numberParams gives each placeholder its position (the parser records only byte offsets).
func numberParams(st ast.StmtNode) int {
	v := &paramCollector{}
	st.Accept(v)
	sort.Slice(v.ps, func(i, j int) bool { return v.ps[i].Offset < v.ps[j].Offset })
	for i, p := range v.ps {
		p.Order = i
	}
	return len(v.ps)
}

type paramCollector struct{ ps []*driver.ParamMarkerExpr }

func (v *paramCollector) Enter(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*driver.ParamMarkerExpr); ok {
		v.ps = append(v.ps, p)
	}
	return n, false
}
func (v *paramCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// Prepare parses a statement for COM_STMT_PREPARE.
func (s *Session) Prepare(ctx context.Context, text string) (proto.StmtInfo, error) {
	if err := s.db.syncCluster(); err != nil {
		return proto.StmtInfo{}, err
	}
	stmts, err := s.parse(s.clientText(text))
	if err != nil {
		return proto.StmtInfo{}, err
	}
	if len(stmts) != 1 {
		if len(stmts) == 0 {
			return proto.StmtInfo{}, sqlerr.New(sqlerr.ErrEmptyQuery, "Query was empty")
		}
		return proto.StmtInfo{}, sqlerr.New(sqlerr.ErrUnsupportedPS, "This command is not supported in the prepared statement protocol yet")
	}
	p, err := s.prepareStmt(stmts[0])
	if err != nil {
		return proto.StmtInfo{}, err
	}
	info := proto.StmtInfo{ID: p.id, Params: p.nParams}
	if p.plan != nil {
		info.Columns = p.plan.Cols[:p.plan.NVisible]
	}
	return info, nil
}

func (s *Session) prepareStmt(st ast.StmtNode) (*prepared, error) {
	if _, ok := st.(*ast.LoadDataStmt); ok {
		return nil, sqlerr.New(sqlerr.ErrUnsupportedPS, "This command is not supported in the prepared statement protocol yet")
	}
	n := numberParams(st)
	if n > maxParams {
		return nil, sqlerr.New(sqlerr.ErrPsManyParam, "Prepared statement contains too many placeholders")
	}
	s.nextStmt++
	p := &prepared{id: s.nextStmt, stmt: st, nParams: n}
	if rs, ok := st.(ast.ResultSetNode); ok && selectInto(rs) == nil {
		if err := s.planPrepared(p, rs); err != nil {
			return nil, err
		}
	}
	s.stmts[p.id] = p
	return p, nil
}

func (s *Session) planPrepared(p *prepared, rs ast.ResultSetNode) error {
	before := len(s.mdl)
	var pl *exec.Select
	err := s.resolve(func(pp *plan.Planner) (err error) {
		pl, err = pp.PlanResultSet(rs, nil)
		return err
	})
	if s.txn == nil && before == 0 {
		defer s.releaseMDL()
	}
	if err != nil {
		return err
	}
	// The catalog the plan was built on (Resolve checked it against the locks taken after).
	p.plan, p.planVer, p.planDB = pl, s.uses.Cat.Version, s.CurDB
	p.tables = append(p.tables[:0], s.uses.Tables...)
	return nil
}

// PreparedText is the text of prepared statement id ("" if there is none): SHOW PROCESSLIST's
// Info while it executes, as MySQL shows it.
func (s *Session) PreparedText(id uint32) string {
	if p, ok := s.stmts[id]; ok {
		return p.stmt.Text() // the statement's own text, kept by the parser
	}
	return ""
}

// Execute runs a prepared statement with bound arguments.
func (s *Session) Execute(ctx context.Context, id uint32, args []types.Value, w proto.ResultWriter) error {
	p, ok := s.stmts[id]
	if !ok {
		return sqlerr.New(sqlerr.ErrUnknownStmtHandler, "Unknown prepared statement handler (%d) given to mysqld_stmt_execute", id)
	}
	if len(args) != p.nParams {
		return sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to mysqld_stmt_execute")
	}
	s.clientArgs(args)
	return s.diagnose(s.execPrepared(ctx, p, args, s.resultWriter(w), false))
}

func (s *Session) execPrepared(ctx context.Context, p *prepared, args []types.Value, w proto.ResultWriter, more bool) error {
	rs, isQuery := p.stmt.(ast.ResultSetNode)
	if !isQuery || selectInto(rs) != nil {
		// An UPDATE or DELETE finds its kept plan through s.running (dmlPlan).
		outer := s.running
		s.running = p
		defer func() { s.running = outer }()
		return s.Exec(ctx, p.stmt, args, w, more)
	}
	if err := s.db.syncCluster(); err != nil {
		return err
	}
	if err := s.authorize(p.stmt); err != nil {
		return err
	}
	if err := s.readBarrier(ctx); err != nil {
		return err
	}
	s.Info, s.Command = p.stmt.Text(), "Execute"
	defer func() { s.Command, s.Info = "Sleep", "" }()
	s.warnings = s.warnings[:0]
	if d := s.maxExecutionTime(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, expr.ErrTimeout)
		defer cancel()
	}
	if err := s.readAfterGTID(ctx, p.stmt); err != nil {
		return err
	}
	if err := s.readConcern(ctx, p.stmt); err != nil {
		return err
	}
	s.ctx = ctx // lock waits end with the statement (tablelocks.go)
	defer func() { s.ctx = nil }()
	pl, err := s.preparedPlan(p, rs)
	if err != nil {
		if s.txn == nil {
			s.releaseMDL()
		}
		if ctx.Err() != nil {
			return (&expr.Env{Sess: s, Ctx: ctx}).Interrupted()
		}
		return err
	}
	env := &expr.Env{Sess: s, Ctx: ctx, Params: args}
	defer env.CloseMem()
	if sel, ok := rs.(*ast.SelectStmt); ok && sel.From == nil && !plan.HasSubquery(rs) {
		err = s.streamPlan(env, pl, w, more)
	} else {
		err = s.stmtScope(env, func() error { return s.streamPlan(env, pl, w, more) })
	}
	if s.txn == nil {
		s.releaseMDL()
	}
	if err != nil && ctx.Err() != nil && !sqlerr.Is(err, sqlerr.ErrLockDeadlock) {
		if ie := env.Interrupted(); ie != nil {
			err = ie
		}
	}
	return err
}

// CloseStmt drops a prepared statement.
func (s *Session) CloseStmt(id uint32) { delete(s.stmts, id) }

// sqlPrepared runs PREPARE / EXECUTE / DEALLOCATE PREPARE statements.
func (s *Session) sqlPrepared(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) error {
	switch x := st.(type) {
	case *ast.PrepareStmt:
		text := x.SQLText
		if x.SQLVar != nil {
			text = types.ToString(s.userVars[strings.ToLower(x.SQLVar.Name)])
		}
		stmts, err := s.parse(text)
		if err != nil {
			return err
		}
		if len(stmts) != 1 {
			return sqlerr.New(sqlerr.ErrUnsupportedPS, "This command is not supported in the prepared statement protocol yet")
		}
		p, err := s.prepareStmt(stmts[0])
		if err != nil {
			return err
		}
		if s.named == nil {
			s.named = map[string]uint32{}
		}
		if old, ok := s.named[strings.ToLower(x.Name)]; ok {
			delete(s.stmts, old)
		}
		s.named[strings.ToLower(x.Name)] = p.id
		return w.OK(proto.OK{Info: "Statement prepared"}, more)
	case *ast.ExecuteStmt:
		id, ok := s.named[strings.ToLower(x.Name)]
		p := s.stmts[id]
		if !ok || p == nil {
			return sqlerr.New(sqlerr.ErrUnknownStmtHandler, "Unknown prepared statement handler (%s) given to EXECUTE", x.Name)
		}
		if len(x.UsingVars) != p.nParams {
			return sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to EXECUTE")
		}
		args := make([]types.Value, len(x.UsingVars))
		for i, u := range x.UsingVars {
			e, err := s.compileExpr(u)
			if err != nil {
				return err
			}
			if args[i], err = e.Eval(env, nil); err != nil {
				return err
			}
		}
		return s.execPrepared(env.Ctx, p, args, w, more)
	case *ast.DeallocateStmt:
		id, ok := s.named[strings.ToLower(x.Name)]
		if !ok {
			return sqlerr.New(sqlerr.ErrUnknownStmtHandler, "Unknown prepared statement handler (%s) given to DEALLOCATE PREPARE", x.Name)
		}
		delete(s.stmts, id)
		delete(s.named, strings.ToLower(x.Name))
		return w.OK(proto.OK{}, more)
	}
	return nil
}
