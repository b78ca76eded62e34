package sql

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the parser

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/sqltext"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Session is one client's SQL state. It is used by one goroutine at a time.
type Session struct {
	db            *DB
	ddlCatalog    *catalog.Catalog // a DDL's catalog copy while it inserts rows (ctas.go); nil otherwise
	temp          *tempTables      // the session's temporary tables (temptable.go); nil until the first
	ConnID        uint32
	User          string // the login name (USER())
	Host          string
	acctUser      string // the authenticated account (CURRENT_USER(), privileges; acl_check.go)
	acctHost      string
	acctCache     *catalog.Account // account() as of acctOf
	acctOf        *catalog.Accounts
	CurDB         string
	FoundRowsFlag bool // CLIENT_FOUND_ROWS: UPDATE reports matched rather than changed rows
	// SingleStatement refuses a query text holding more than one statement (1064), as MySQL does
	// for a client that did not ask for CLIENT_MULTI_STATEMENTS: a stacked statement appended to
	// injected text does not run. The zero value (embedded use, tests) accepts several.
	SingleStatement bool
	// Table locks (tablelocks.go): LOCK TABLES' locks (table key -> WRITE), FLUSH TABLES WITH
	// READ LOCK, the tables the open transaction uses, and the statement's context for lock waits.
	tlocks     map[string]bool
	globalRead bool
	tuses      map[string]bool
	tableKeys  tableKeyMemo // useTable's lock keys of recent tables
	ctx        context.Context
	// SSLVersion and SSLCipher are the connection's TLS version and cipher ("" without TLS): the
	// session status variables Ssl_version and Ssl_cipher.
	SSLVersion, SSLCipher string

	vars     map[string]types.Value
	userVars map[string]types.Value

	txn        *txn.Txn
	explicit   bool            // the transaction was started by BEGIN or by autocommit=0
	mdl        map[string]bool // databases whose metadata lock this session holds (shared)
	uses       plan.Uses       // what the statement's planning resolved, reused (plancontext.go resolve)
	pcache     planCache       // text statements differing only in literals (plancache.go)
	cachedStmt *prepared       // the cached statement being run, whose plan planQuery returns
	cachedText string          // its text as the client sent it (SHOW PROCESSLIST)
	running    *prepared       // the prepared statement whose UPDATE or DELETE is running (dmlPlan)
	resolving  bool            // a resolve is running: a nested one keeps its own Uses
	savepoints []savepoint

	warnings     []sqlerr.Warning
	lastInsertID uint64
	rowCount     int64
	foundRows    int64
	lastPos      uint64 // commit position of the session's last commit

	stmts    map[uint32]*prepared
	named    map[string]uint32 // SQL-level PREPARE names
	nextStmt uint32
	parser   *parser.Parser
	Info     string // current statement text (PROCESSLIST)
	Command  string
	Since    time.Time

	exprDepth int // expressions being compiled, nested (nesting.go)

	// parseModeText is the sql_mode parseMode was last computed from: sqlMode recomputes
	// (upper-casing and splitting the string) only when it changes.
	parseModeText string
	parseMode     mysql.SQLMode

	// Autocommit's answer, valid while the globals map is acGlobals and no session SET ran since
	// (varsGen counts them).
	varsGen   uint64
	acValid   bool
	ac        bool
	acGen     uint64
	acGlobals *map[string]types.Value
	// character_set_client and character_set_results, lower-cased (charset.go), and other
	// variables every statement or command reads.
	csClient, csResults                  varMemo
	waitTimeout, lockTimeout, trackGTIDs varMemo
}

type savepoint struct {
	name string
	sp   int
}

// NewSession creates a session.
func (db *DB) NewSession(connID uint32, user, host, curDB string) *Session {
	s := &Session{db: db, ConnID: connID, User: user, Host: host, CurDB: curDB,
		vars: map[string]types.Value{}, userVars: map[string]types.Value{}, stmts: map[uint32]*prepared{},
		parser: parser.New(), Command: "Sleep", Since: time.Now()}
	// The account the login matches; the server sets the one the handshake authenticated.
	if a, ok := db.Catalog().Accounts.Match(user, host); ok {
		s.acctUser, s.acctHost = a.User, a.Host
	} else {
		s.acctUser, s.acctHost = user, host
	}
	return s
}

func (s *Session) catalog() *catalog.Catalog {
	if s.ddlCatalog != nil {
		return s.ddlCatalog // CREATE TABLE ... SELECT inserting into its new table (ctas.go)
	}
	if s.temp != nil {
		return s.temp.overlay(s.db.Catalog()) // with the temporary tables (temptable.go)
	}
	return s.db.Catalog()
}

// InTxn reports whether an explicit (or autocommit=0) transaction is open.
func (s *Session) InTxn() bool { return s.txn != nil && s.explicit }

// Variables read by every statement, looked up once.
var (
	svAutocommit       = sysvar.Must("autocommit")
	svWaitTimeout      = sysvar.Must("wait_timeout")
	svMaxExecutionTime = sysvar.Must("max_execution_time")
	svSQLMode          = sysvar.Must("sql_mode")
	svIsolation        = sysvar.Must("transaction_isolation")
	svLockWaitTimeout  = sysvar.Must("lock_wait_timeout")
)

// Autocommit reports the autocommit setting. A statement reads it three or four times (its
// transaction, the status flags of its OK or EOF packets), so the answer is kept until a session
// SET (varsGen) or a SET GLOBAL (a new globals map) may have changed it.
func (s *Session) Autocommit() bool {
	g := s.db.globals.vals.Load()
	if s.acValid && s.acGlobals == g && s.acGen == s.varsGen {
		return s.ac
	}
	v := s.getSysVar(svAutocommit, false)
	s.ac, _ = types.ToBool(v)
	s.acValid, s.acGlobals, s.acGen = true, g, s.varsGen
	return s.ac
}

// Status returns the OK/EOF status flags.
func (s *Session) Status() uint16 {
	var st uint16
	if s.InTxn() {
		st |= mysql.ServerStatusInTrans
	}
	if s.Autocommit() {
		st |= mysql.ServerStatusAutocommit
	}
	return st
}

// LastCommitPos is the log position of the session's last commit (read-your-writes token).
func (s *Session) LastCommitPos() uint64 { return s.lastPos }

// WaitTimeout is the session's wait_timeout.
func (s *Session) WaitTimeout() time.Duration {
	v := s.memoVal(&s.waitTimeout, svWaitTimeout) // every command
	return time.Duration(types.ToIntLenient(v)) * time.Second
}

func (s *Session) lockWaitTimeout() time.Duration {
	v := s.getSysVar(sysvar.Must("innodb_lock_wait_timeout"), false)
	return time.Duration(types.ToIntLenient(v)) * time.Second
}

func (s *Session) maxExecutionTime() time.Duration {
	v := s.getSysVar(svMaxExecutionTime, false)
	return time.Duration(types.ToIntLenient(v)) * time.Millisecond
}

func (s *Session) strict() bool {
	m := strings.ToUpper(types.ToString(s.getSysVar(svSQLMode, false)))
	return strings.Contains(m, "STRICT_TRANS_TABLES") || strings.Contains(m, "STRICT_ALL_TABLES")
}

// sqlModeHas reports whether sql_mode holds flag (upper case). It walks the list in place: every
// UPDATE and INSERT asks (ERROR_FOR_DIVISION_BY_ZERO, NO_ZERO_DATE), and splitting it was three
// allocations a statement.
func (s *Session) sqlModeHas(flag string) bool {
	m := types.ToString(s.getSysVar(svSQLMode, false))
	for m != "" {
		var f string
		f, m, _ = strings.Cut(m, ",")
		if strings.EqualFold(f, flag) {
			return true
		}
	}
	return false
}

func (s *Session) connCollation() *types.Collation {
	name := types.ToString(s.getSysVar(sysvar.Must("collation_connection"), false))
	if c, ok := types.LookupCollation(name); ok {
		return c
	}
	c, _ := types.LookupCollation("utf8mb4_0900_ai_ci")
	return c
}

func (s *Session) location() *time.Location {
	tz := types.ToString(s.getSysVar(sysvar.Must("time_zone"), false))
	if tz == "SYSTEM" || tz == "" {
		return time.Local
	}
	if loc, err := sysvar.ParseTimeZone(tz); err == nil {
		return loc
	}
	return time.Local
}

func (s *Session) isolation() txn.Isolation {
	v := strings.ToUpper(types.ToString(s.getSysVar(svIsolation, false)))
	if v == "READ-COMMITTED" || v == "READ-UNCOMMITTED" {
		return txn.ReadCommitted
	}
	return txn.RepeatableRead
}

func (s *Session) addWarning(level string, code uint16, msg string) {
	if len(s.warnings) < 65535 {
		s.warnings = append(s.warnings, sqlerr.Warning{Level: level, Code: code, Message: msg})
	}
}

func (s *Session) warningCount() uint16 {
	if len(s.warnings) > 65535 {
		return 65535
	}
	return uint16(len(s.warnings))
}

// Close ends the session: an open transaction rolls back.
func (s *Session) Close() {
	s.rollback()
	s.unlockTables()
	s.db.userLocks.releaseAll(s.ConnID)
	s.closeTemp()
}

// Parse parses statement text with the session's SQL mode.
// sqlMode returns sql_mode as set and as parsed, parsing it again (and handing it to the parser)
// only when it changed: the parser and the plan cache's lexer read it on every statement.
func (s *Session) sqlMode() (string, mysql.SQLMode) {
	if m := types.ToString(s.getSysVar(svSQLMode, false)); m != s.parseModeText || s.parseModeText == "" {
		s.parseMode, _ = mysql.GetSQLMode(strings.ToUpper(m))
		s.parser.SetSQLMode(s.parseMode)
		s.parseModeText = m
	}
	return s.parseModeText, s.parseMode
}

func (s *Session) parse(text string) ([]ast.StmtNode, error) {
	s.sqlMode()
	if err := checkTextNesting(text); err != nil {
		return nil, err
	}
	text, err := s.rewriteJSONTable(text)
	if err != nil {
		return nil, err
	}
	var stmts []ast.StmtNode
	if t, ok := exprDefaultRewrite(text); ok { // DEFAULT (expr) in CREATE/ALTER: exprdefault.go
		stmts, err = parseSQL(s.parser, t)
	}
	if stmts == nil {
		stmts, err = parseSQL(s.parser, text)
	}
	if err != nil {
		if t, ok := loadDataFallback(text); ok { // LOAD DATA ... IGNORE n ROWS
			if st, err2 := parseSQL(s.parser, t); err2 == nil {
				stmts, err = st, nil
			}
		}
		if t, ok := dumpfileFallback(text); ok && err != nil { // SELECT ... INTO DUMPFILE
			if st, err2 := parseSQL(s.parser, t); err2 == nil {
				markDumpfile(st)
				stmts, err = st, nil
			}
		}
	}
	if err != nil {
		if e, ok := err.(*sqlerr.Error); ok { // parseSQL's answer to a parser panic
			return nil, e
		}
		// Unknown character sets and collations are their own errors, not syntax errors; so is
		// 1221 (DEFAULT on a generated column, refused by the parser).
		if m := parseCodeRe.FindStringSubmatch(err.Error()); m != nil {
			if code, _ := strconv.Atoi(m[1]); code == sqlerr.ErrUnknownCharset || code == sqlerr.ErrUnknownCollation || code == sqlerr.ErrWrongUsage {
				return nil, sqlerr.New(uint16(code), "%s", m[2])
			}
		}
		return nil, sqlerr.New(sqlerr.ErrParse, "%s", sqltext.UnmarkJSONTable(parseErrorMessage(err)))
	}
	if err := checkTreeNesting(text, stmts); err != nil {
		return nil, err
	}
	return stmts, nil
}

var parseCodeRe = regexp.MustCompile(`\[(?:parser|ddl):(\d+)\](.*)$`)

var parseErrRe = regexp.MustCompile(`(?s)line (\d+) column \d+ near "(.*)"\s*$`)

// parseErrorMessage renders a parser error as MySQL words it.
func parseErrorMessage(err error) string {
	msg := err.Error()
	const prefix = "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use"
	if m := parseErrRe.FindStringSubmatch(msg); m != nil {
		near := strings.TrimRight(m[2], "; \n")
		return fmt.Sprintf("%s near '%s' at line %s", prefix, near, m[1])
	}
	if i := strings.Index(msg, "You have an error"); i >= 0 {
		return msg[i:]
	}
	return prefix + " " + msg
}

// multiStatementError is MySQL's answer to a second statement from a client without
// CLIENT_MULTI_STATEMENTS: a syntax error near the text after the first statement (first).
func multiStatementError(text, first string) error {
	off := 0
	if i := strings.Index(text, first); i >= 0 {
		off = i + len(first)
	}
	for off < len(text) && strings.IndexByte("; \t\r\n", text[off]) >= 0 {
		off++
	}
	line := 1 + strings.Count(text[:off], "\n")
	near := strings.TrimRight(text[off:], "; \t\r\n")
	return sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line %d", near, line)
}

// Query runs statement text (possibly several statements) and writes each result.
func (s *Session) Query(ctx context.Context, text string, w proto.ResultWriter) error {
	text = s.clientText(text)
	w = s.resultWriter(w)
	cached, args, rest, learn := s.planCacheLookup(text)
	if cached != nil {
		if rest == "" {
			return s.diagnose(s.execCached(ctx, cached, args, text, w, false))
		}
		// "INSERT ...; commit;": the first statement cached, the others parsed.
		if more, ok := s.parseRest(rest); ok {
			if err := s.execCached(ctx, cached, args, text, w, true); err != nil {
				return s.diagnose(err)
			}
			for i, st := range more {
				if err := s.Exec(ctx, st, nil, w, i < len(more)-1); err != nil {
					return s.diagnose(err)
				}
			}
			return nil
		}
	}
	stmts, err := s.parse(text)
	if err != nil {
		s.warnings = s.warnings[:0]
		return s.diagnose(err)
	}
	if learn != nil && (len(stmts) == 1 || len(stmts) > 1 && learn.Rest != "" && !s.SingleStatement) {
		// The parser reuses the slice it returns: learning parses again.
		stmts = append([]ast.StmtNode(nil), stmts...)
		s.planCacheLearn(learn, stmts[0])
	}
	if len(stmts) == 0 {
		s.warnings = s.warnings[:0]
		return s.diagnose(sqlerr.New(sqlerr.ErrEmptyQuery, "Query was empty"))
	}
	if len(stmts) > 1 && s.SingleStatement {
		s.warnings = s.warnings[:0]
		return s.diagnose(multiStatementError(text, stmts[0].Text()))
	}
	for i, st := range stmts {
		more := i < len(stmts)-1
		if err := s.Exec(ctx, st, nil, w, more); err != nil {
			return s.diagnose(err)
		}
	}
	return nil
}

// diagnose adds a failed statement's error to its diagnostics, after the warnings it raised, as
// MySQL does: SHOW WARNINGS lists it (Level Error), SHOW ERRORS and @@error_count count it.
func (s *Session) diagnose(err error) error {
	if err != nil {
		e := sqlerr.As(err)
		s.addWarning("Error", e.Code, e.Message)
	}
	return err
}

// Exec runs one parsed statement.
func (s *Session) Exec(ctx context.Context, st ast.StmtNode, params []types.Value, w proto.ResultWriter, more bool) error {
	s.Info = st.Text()
	if s.cachedText != "" {
		s.Info = s.cachedText
	}
	s.Command = "Query"
	s.Since = time.Now()
	defer func() { s.Command, s.Info, s.Since, s.ctx = "Sleep", "", time.Now(), nil }()
	if !keepsDiagnostics(st) {
		s.warnings = s.warnings[:0]
	}
	if d := s.maxExecutionTime(); d > 0 {
		switch st.(type) {
		case *ast.SelectStmt, *ast.SetOprStmt: // a UNION is a SELECT statement too
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, d, expr.ErrTimeout)
			defer cancel()
		}
	}
	if err := s.db.syncCluster(); err != nil {
		return err
	}
	if err := s.authorize(st); err != nil {
		return err
	}
	if err := s.db.refuseWrite(st); err != nil && !s.writesOnlyTemp(st) {
		return err
	}
	if err := s.readBarrier(ctx); err != nil {
		return err
	}
	if err := s.readAfterGTID(ctx, st); err != nil {
		return err
	}
	if err := s.readConcern(ctx, st); err != nil {
		return err
	}
	s.ctx = ctx // lock waits deep in planning end with the statement (tablelocks.go)
	env := &expr.Env{Sess: s, Ctx: ctx, Params: params}
	defer env.CloseMem()
	err := s.dispatch(env, st, w, more)
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

// keepsDiagnostics reports the statements that read the previous statement's diagnostics instead of
// starting their own, as in MySQL: SHOW WARNINGS, SHOW ERRORS and SELECT @@warning_count /
// @@error_count. Every other statement (other SHOWs too) clears them.
func keepsDiagnostics(st ast.StmtNode) bool {
	switch x := st.(type) {
	case *ast.ShowStmt:
		return x.Tp == ast.ShowWarnings || x.Tp == ast.ShowErrors
	case *ast.SelectStmt:
		return selectsDiagnostics(st)
	}
	return false
}

// selectsDiagnostics reports SELECT @@warning_count and friends, which must not clear warnings.
func selectsDiagnostics(st ast.StmtNode) bool {
	t := strings.ToLower(st.Text())
	return strings.Contains(t, "warning_count") || strings.Contains(t, "error_count")
}

func (s *Session) dispatch(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) error {
	switch x := st.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return s.runQuery(env, x.(ast.ResultSetNode), w, more)
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		return s.runDML(env, st, w, more)
	case *ast.LoadDataStmt:
		return s.loadData(env, x, w, more)
	case *ast.BeginStmt:
		if err := s.commit(env.Ctx); err != nil {
			return err
		}
		s.unlockTableLocks() // not the global read lock, as in MySQL
		s.begin(x.ReadOnly)
		s.explicit = true
		if x.CausalConsistencyOnly || true {
			// WITH CONSISTENT SNAPSHOT takes the read view now; plain BEGIN at the first read.
			if strings.Contains(strings.ToUpper(x.Text()), "CONSISTENT SNAPSHOT") {
				s.txn.TakeSnapshot()
			}
		}
		return w.OK(proto.OK{}, more)
	case *ast.CommitStmt:
		if err := s.commit(env.Ctx); err != nil {
			return err
		}
		return w.OK(s.okWithPos(proto.OK{}), more)
	case *ast.RollbackStmt:
		if x.SavepointName != "" {
			return s.rollbackTo(x.SavepointName, w, more)
		}
		s.rollback()
		return w.OK(proto.OK{}, more)
	case *ast.SavepointStmt:
		if s.txn == nil {
			if s.Autocommit() {
				return w.OK(proto.OK{}, more) // outside a transaction a savepoint is a no-op
			}
			if err := s.ensureTxn(); err != nil {
				return err
			}
		}
		name := strings.ToLower(x.Name)
		for i, sp := range s.savepoints {
			if sp.name == name {
				s.savepoints = append(s.savepoints[:i], s.savepoints[i+1:]...)
				break
			}
		}
		s.savepoints = append(s.savepoints, savepoint{name: name, sp: s.txn.Savepoint()})
		return w.OK(proto.OK{}, more)
	case *ast.ReleaseSavepointStmt:
		name := strings.ToLower(x.Name)
		for i, sp := range s.savepoints {
			if sp.name == name {
				s.savepoints = s.savepoints[:i]
				return w.OK(proto.OK{}, more)
			}
		}
		return sqlerr.New(sqlerr.ErrSavepointNotExist, "SAVEPOINT %s does not exist", x.Name)
	case *ast.UseStmt:
		if err := s.UseDB(x.DBName); err != nil {
			return err
		}
		return w.OK(proto.OK{}, more)
	case *ast.SetStmt:
		if err := s.set(env, x); err != nil {
			return err
		}
		return w.OK(proto.OK{Warnings: s.warningCount()}, more)
	case *ast.ShowStmt:
		return s.show(env, x, w, more)
	case *ast.ExplainStmt:
		return s.explain(env, x, w, more)
	case *ast.CreateDatabaseStmt, *ast.DropDatabaseStmt, *ast.CreateTableStmt, *ast.DropTableStmt,
		*ast.TruncateTableStmt, *ast.RenameTableStmt, *ast.CreateIndexStmt, *ast.DropIndexStmt,
		*ast.AlterTableStmt, *ast.CreateViewStmt, *ast.AlterDatabaseStmt:
		if done, err := s.tempDDL(env, st, w, more); done {
			return err
		}
		if ct, ok := st.(*ast.CreateTableStmt); ok && ct.Select != nil {
			return s.runCreateTableSelect(env, ct, w, more)
		}
		return s.runDDL(env, st, w, more)
	case *ast.KillStmt:
		if s.db.cfg.Kill == nil {
			return sqlerr.New(sqlerr.ErrNoSuchThread, "Unknown thread id: %d", x.ConnectionID)
		}
		if err := s.authorizeKill(uint32(x.ConnectionID)); err != nil {
			return err
		}
		if err := s.db.cfg.Kill(uint32(x.ConnectionID), x.Query); err != nil {
			return err
		}
		return w.OK(proto.OK{}, more)
	case *ast.DoStmt:
		for _, e := range x.Exprs {
			ce, err := s.compileExpr(e)
			if err != nil {
				return err
			}
			if _, err := ce.Eval(env, nil); err != nil {
				return err
			}
		}
		return w.OK(proto.OK{}, more)
	case *ast.LockTablesStmt:
		return s.lockTables(env, x, w, more)
	case *ast.UnlockTablesStmt:
		// As in MySQL, UNLOCK TABLES commits only if LOCK TABLES locked something: mysqldump
		// --single-transaction sends it inside its snapshot transaction (after FLUSH TABLES WITH
		// READ LOCK with --source-data), which must go on.
		if s.tlocks != nil {
			if err := s.commit(env.Ctx); err != nil {
				return err
			}
		}
		s.unlockTables()
		return w.OK(proto.OK{}, more)
	case *ast.FlushStmt:
		if x.Tp == ast.FlushTables && x.ReadLock {
			return s.flushWithReadLock(env, w, more)
		}
		if x.Tp == ast.FlushPrivileges && s.db.cfg.FlushAuthCache != nil {
			s.db.cfg.FlushAuthCache("", "") // accounts are always current; only the sha2 cache goes
		}
		return w.OK(proto.OK{}, more)
	case *ast.AnalyzeTableStmt:
		return w.OK(proto.OK{}, more)
	case *ast.PrepareStmt, *ast.ExecuteStmt, *ast.DeallocateStmt:
		return s.sqlPrepared(env, st, w, more)
	case *ast.CreateUserStmt, *ast.GrantStmt, *ast.RevokeStmt, *ast.DropUserStmt, *ast.AlterUserStmt, *ast.SetPwdStmt, *ast.RenameUserStmt:
		return s.runACL(env, st, w, more)
	case *ast.GrantRoleStmt, *ast.RevokeRoleStmt, *ast.SetRoleStmt, *ast.SetDefaultRoleStmt:
		return notSupported("roles")
	}
	return sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of Kiln doesn't yet support '%s'", stmtKind(st))
}

func stmtKind(st ast.StmtNode) string {
	t := strings.TrimPrefix(fmt.Sprintf("%T", st), "*ast.")
	return strings.TrimSuffix(t, "Stmt")
}

// UseDB changes the current database.
func (s *Session) UseDB(name string) error {
	// COM_INIT_DB and the handshake's database come before any statement: on a replica the catalog
	// may have changed through the log since the last one.
	if err := s.db.syncCluster(); err != nil {
		return err
	}
	if err := s.authorizeUse(name); err != nil {
		return err
	}
	if _, ok := s.catalog().DB(name); !ok && !isVirtualDB(name) {
		return sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", name)
	}
	s.CurDB = name
	return nil
}

// begin starts a new transaction and takes the shared metadata lock.
func (s *Session) begin(readOnly bool) {
	s.txn = s.db.txm.Begin(s.isolation(), readOnly)
	if s.temp != nil {
		s.txn.SetLocal(s.temp.local)
	}
	s.savepoints = s.savepoints[:0]
}

// ensureTxn makes sure a transaction is open for a statement. With autocommit=0 it is an explicit one.
func (s *Session) ensureTxn() error {
	if s.txn != nil {
		return nil
	}
	s.begin(false)
	s.explicit = !s.Autocommit()
	return nil
}

func (s *Session) endTxn() {
	s.txn = nil
	s.explicit = false
	s.savepoints = s.savepoints[:0]
	s.releaseMDL()
}

// commit commits the open transaction, if any.
func (s *Session) commit(ctx context.Context) error {
	if s.txn == nil {
		return nil
	}
	t := s.txn
	s.endTxnKeepLock()
	t.SetAsync(s.getSysVar(sysvar.Durability, false).S == "async")
	if s.db.globals.get(sysvar.BeforeImages).I != 0 {
		t.SetBeforeImages(rowenc.IsRowKey)
	}
	pos, err := t.Commit(ctx)
	s.releaseMDL()
	if err != nil {
		return commitError(err)
	}
	if pos > 0 {
		s.lastPos = pos
	}
	return s.ackApplied(ctx, pos) // kiln_commit_ack (commitack.go)
}

func (s *Session) endTxnKeepLock() {
	s.txn = nil
	s.explicit = false
	s.savepoints = s.savepoints[:0]
}

// lockDB takes the shared metadata lock of a database for the rest of the transaction (or of the
// statement, in autocommit mode) before its tables are resolved: DDL on that database waits for it.
func (s *Session) lockDB(name string) error {
	name = strings.ToLower(name)
	if s.mdl[name] {
		return nil
	}
	if s.mdl == nil {
		s.mdl = map[string]bool{}
	}
	if err := s.db.mdlFor(name).rlock(s.stmtCtx(), s.metadataLockTimeout()); err != nil {
		return err
	}
	s.mdl[name] = true
	return nil
}

func (s *Session) releaseMDL() {
	s.releaseTableUses()
	for name := range s.mdl {
		s.db.mdlFor(name).runlock()
		delete(s.mdl, name)
	}
}

func commitError(err error) error {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return se
	}
	return sqlerr.New(sqlerr.ErrUnknownError, "commit failed: %v", err)
}

func (s *Session) rollback() {
	if s.txn == nil {
		return
	}
	s.txn.Rollback()
	s.endTxn()
}

func (s *Session) rollbackTo(name string, w proto.ResultWriter, more bool) error {
	name = strings.ToLower(name)
	for i := len(s.savepoints) - 1; i >= 0; i-- {
		if s.savepoints[i].name == name {
			s.txn.RollbackTo(s.savepoints[i].sp)
			s.savepoints = s.savepoints[:i+1]
			return w.OK(proto.OK{}, more)
		}
	}
	return sqlerr.New(sqlerr.ErrSavepointNotExist, "SAVEPOINT %s does not exist", name)
}

func (s *Session) okWithPos(ok proto.OK) proto.OK {
	return ok
}

// stmtScope runs fn as one statement inside the session's transaction: a failed statement rolls back
// only itself, except a deadlock, which rolls back the whole transaction (as InnoDB). In autocommit
// mode the statement's own transaction commits at the end.
func (s *Session) stmtScope(env *expr.Env, fn func() error) error {
	autocommitStmt := s.txn == nil && s.Autocommit()
	if err := s.ensureTxn(); err != nil {
		return err
	}
	t := s.txn
	t.NewStatement()
	sp := t.Savepoint()
	err := fn()
	if err != nil {
		if sqlerr.Is(err, sqlerr.ErrLockDeadlock) || autocommitStmt {
			s.rollback()
		} else {
			t.RollbackTo(sp)
		}
		return err
	}
	if autocommitStmt {
		return s.commit(env.Ctx)
	}
	return nil
}

// runQuery executes a SELECT and streams its rows.
func (s *Session) runQuery(env *expr.Env, n ast.ResultSetNode, w proto.ResultWriter, more bool) error {
	if into := selectInto(n); into != nil {
		return s.selectIntoFile(env, n, into, w, more)
	}
	if sel, ok := n.(*ast.SelectStmt); ok && sel.From == nil && !plan.HasSubquery(n) {
		// SELECT without tables needs no transaction (connect-time @@variable queries are hot).
		pl, err := s.planQuery(n)
		if err != nil {
			return err
		}
		return s.streamPlan(env, pl, w, more)
	}
	pl, err := s.planQuery(n)
	if err != nil {
		return err
	}
	return s.stmtScope(env, func() error { return s.streamPlan(env, pl, w, more) })
}

func (s *Session) planQuery(n ast.ResultSetNode) (pl *exec.Select, err error) {
	if c := s.cachedStmt; c != nil && ast.Node(c.stmt) == ast.Node(n) {
		return s.preparedPlan(c, n)
	}
	err = s.resolve(func(p *plan.Planner) (err error) {
		pl, err = p.PlanResultSet(n, nil)
		return err
	})
	return pl, err
}

func (s *Session) streamPlan(env *expr.Env, pl *exec.Select, w proto.ResultWriter, more bool) error {
	// Every row goes to w before the next is read, and w keeps none (proto.ResultWriter).
	it, err := pl.OpenStreaming(env)
	if err != nil {
		return err
	}
	defer it.Close()
	// Read the first row before sending the header, so an error in it becomes an ERR packet.
	first, err := it.Next()
	if err != nil {
		return err
	}
	if err := w.Columns(pl.Cols[:pl.NVisible]); err != nil {
		return err
	}
	n := int64(0)
	for r := first; r != nil; {
		if err := w.Row(r[:pl.NVisible]); err != nil {
			return err
		}
		n++
		if r, err = it.Next(); err != nil {
			return err
		}
	}
	s.foundRows = n
	s.rowCount = -1
	return w.EndRows(s.warningCount(), more)
}

func contextBackground() context.Context { return context.Background() }
