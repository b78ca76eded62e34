package sql

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/gtid"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// GTIDs: Kiln's log position in the form MySQL tools speak (docs/operations.md, "Reads on a
// cluster: GTIDs"). The cluster has one UUID; the transaction committed at log index i has the
// GTID <cluster uuid>:i, and a node's @@gtid_executed is <cluster uuid>:1-<applied index>. Indexes
// that carry no transaction (raft's empty entry at each new term, membership changes) are in the
// range too: they are applied like the others, so "every index up to the applied one is executed
// here" stays true and the set stays one interval, which is what GTID tools expect of a server
// that has executed its whole history. Waiting for a set is waiting for the applied index to reach
// the set's largest index of the cluster's UUID.

// LogPosition is the node's log position as the GTID features read it (Config.LogPosition).
type LogPosition interface {
	ClusterUUID() gtid.UUID
	ServerUUID() string
	// Applied is the node's applied log index: every index up to it is applied here.
	Applied() uint64
	// WaitApplied returns once Applied() >= index, or with ctx's error, or an error if the node
	// stopped.
	WaitApplied(ctx context.Context, index uint64) error
	// ReadIndex returns an index covering every commit acknowledged in the cluster before the
	// call, confirmed by a quorum (kiln_read_concern = linearizable), or ctx's error.
	ReadIndex(ctx context.Context) (uint64, error)
}

// gtidExecuted is @@gtid_executed: <cluster uuid>:1-<applied>, empty before anything is applied.
func (db *DB) gtidExecuted() gtid.Set {
	lp := db.cfg.LogPosition
	if lp == nil {
		return gtid.Set{}
	}
	return gtid.Range(lp.ClusterUUID(), 1, lp.Applied())
}

// gtidSysVar computes the GTID variables that are not stored values.
func (s *Session) gtidSysVar(name string) (types.Value, bool) {
	switch name {
	case "gtid_executed":
		return stringVal(s.db.gtidExecuted().String()), true
	case "server_uuid":
		if lp := s.db.cfg.LogPosition; lp != nil {
			return stringVal(lp.ServerUUID()), true
		}
	}
	return types.Null, false
}

// waitIndex turns a GTID set into the log index this node must have applied for the set to be
// executed here. A set naming another UUID is refused: only this cluster's UUID is ever executed
// here, so MySQL's wait would never end (until its timeout); a client that holds another cluster's
// GTIDs is talking to the wrong cluster, and an error says so at once.
func (s *Session) waitIndex(set gtid.Set, what string) (uint64, error) {
	var cu gtid.UUID
	if lp := s.db.cfg.LogPosition; lp != nil {
		cu = lp.ClusterUUID()
	}
	for _, u := range set.UUIDs() {
		if u != cu || s.db.cfg.LogPosition == nil {
			return 0, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to %s: the GTID set names %s, which is not this cluster's UUID (%s); its transactions are never executed here", what, u, cu)
		}
	}
	return set.Max(cu), nil
}

// waitForGTIDs waits until index is applied here: nil when it is, errGTIDWaitTimeout when
// timeout (>0) passed first, the statement's interruption (KILL QUERY: 1317, max_execution_time:
// 3024) when ctx ended.
func (s *Session) waitForGTIDs(ctx context.Context, index uint64, timeout time.Duration) error {
	lp := s.db.cfg.LogPosition
	if index == 0 || lp.Applied() >= index {
		return nil
	}
	return s.boundedWait(ctx, timeout, func(wctx context.Context) error { return lp.WaitApplied(wctx, index) })
}

// boundedWait runs wait (a wait for the log position) under ctx and, when timeout > 0, that timeout:
// errGTIDWaitTimeout when the timeout ended it, the statement's interruption (KILL QUERY: 1317,
// max_execution_time: 3024) when ctx did, else wait's own result.
func (s *Session) boundedWait(ctx context.Context, timeout time.Duration, wait func(context.Context) error) error {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeoutCause(ctx, timeout, errGTIDWaitTimeout)
		defer cancel()
	}
	err := wait(wctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return (&expr.Env{Sess: s, Ctx: ctx}).Interrupted()
	}
	if wctx.Err() != nil && errors.Is(context.Cause(wctx), errGTIDWaitTimeout) {
		return errGTIDWaitTimeout
	}
	return err
}

var errGTIDWaitTimeout = errors.New("GTID wait timed out")

// The GTID variables read on every statement, looked up once.
var (
	trackGTIDsVar       = sysvar.Must("session_track_gtids")
	readAfterTimeoutVar = sysvar.Must("kiln_read_after_gtid_timeout")
)

// WAIT_FOR_EXECUTED_GTID_SET is a function of the registry whose state is the server's (the applied
// index and the cluster's GTIDs): the facade registers it.
func init() {
	expr.Register(expr.Builtin{Name: "wait_for_executed_gtid_set", MinArgs: 1, MaxArgs: 2, Build: gtidFunc})
}

// gtidFunc builds WAIT_FOR_EXECUTED_GTID_SET(set [, timeout]): 0 once the set is executed here,
// 1 when timeout seconds passed first (0 or no timeout: wait without limit, as MySQL), MySQL's
// errors for a malformed set (1772), a NULL set (1772 'NULL') and a NULL or negative timeout
// (1210; NULL with a warning outside strict mode), and 1210 for another UUID (waitIndex). The wait
// ends with the statement: KILL QUERY, max_execution_time.
func gtidFunc(c *expr.Call) (expr.Expr, error) {
	return &expr.Closure{Typed: expr.Typed{T: expr.TInt}, Args: c.Args, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
		v, err := a[0].Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		if v.IsNull() {
			return types.Null, sqlerr.New(sqlerr.ErrMalformedGTIDSetSpecification, "Malformed GTID set specification 'NULL'.")
		}
		var timeout time.Duration
		if len(a) == 2 {
			tv, err := a[1].Eval(env, row)
			if err != nil {
				return types.Null, err
			}
			secs := types.ToFloat(tv)
			if tv.IsNull() || secs < 0 {
				if tv.IsNull() || sessionOf(env).strict() {
					return types.Null, sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to WAIT_FOR_EXECUTED_GTID_SET.")
				}
				env.Sess.AddWarning("Warning", sqlerr.ErrWrongArguments, "Incorrect arguments to WAIT_FOR_EXECUTED_GTID_SET.")
				return types.Null, nil
			}
			timeout = time.Duration(secs * float64(time.Second))
			if secs > 0 && timeout <= 0 {
				timeout = time.Nanosecond
			}
		}
		text := types.ToString(v)
		set, err := gtid.Parse(text)
		if err != nil {
			return types.Null, sqlerr.New(sqlerr.ErrMalformedGTIDSetSpecification, "Malformed GTID set specification '%s'.", text)
		}
		idx, err := sessionOf(env).waitIndex(set, "WAIT_FOR_EXECUTED_GTID_SET")
		if err != nil {
			return types.Null, err
		}
		switch err := sessionOf(env).waitForGTIDs(env.Ctx, idx, timeout); {
		case err == nil:
			return types.NewInt(0), nil
		case errors.Is(err, errGTIDWaitTimeout):
			return types.NewInt(1), nil
		default:
			return types.Null, err
		}
	}}, nil
}

// checkReadAfterGTID refuses a kiln_read_after_gtid that names another cluster's UUID (the syntax
// was checked by sysvar.Validate).
func (s *Session) checkReadAfterGTID(val types.Value) error {
	set, err := gtid.Parse(types.ToString(val))
	if err != nil {
		return sqlerr.New(sqlerr.ErrMalformedGTIDSetSpecification, "Malformed GTID set specification '%s'.", types.ToString(val))
	}
	if _, err := s.waitIndex(set, "kiln_read_after_gtid"); err != nil {
		return sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'kiln_read_after_gtid' can't be set to the value of '%s' (%s)", types.ToString(val), strings.TrimPrefix(err.Error(), "Incorrect arguments to kiln_read_after_gtid: "))
	}
	return nil
}

// readAfterGTID runs before a statement that reads tables while kiln_read_after_gtid is set: it
// waits, as WAIT_FOR_EXECUTED_GTID_SET would, until this node has applied the set, so the read
// sees those transactions. Statements that read no table (SET, SELECT @@x, ...) do not wait, so a
// session can always change the variable.
func (s *Session) readAfterGTID(ctx context.Context, st ast.StmtNode) error {
	x, ok := s.vars["kiln_read_after_gtid"]
	if !ok || x.S == "" || s.db.cfg.LogPosition == nil || !readsTables(st) {
		return nil
	}
	set, err := gtid.Parse(x.S)
	if err != nil {
		return nil // checked at SET
	}
	idx, err := s.waitIndex(set, "kiln_read_after_gtid")
	if err != nil {
		return err
	}
	if s.db.cfg.LogPosition.Applied() >= idx {
		return nil
	}
	timeout := time.Duration(types.ToIntLenient(s.getSysVar(readAfterTimeoutVar, false))) * time.Second
	err = s.waitForGTIDs(ctx, idx, timeout)
	if errors.Is(err, errGTIDWaitTimeout) {
		return sqlerr.New(sqlerr.ErrQueryTimeout, "Query execution was interrupted, kiln_read_after_gtid_timeout (%s) exceeded while this node waited to apply '%s' (applied here: %s)",
			timeout, x.S, s.db.gtidExecuted().Compact())
	}
	if err != nil {
		return err
	}
	// What was waited for may be DDL: the catalog loaded before the wait may be older than it.
	return s.db.syncCluster()
}

// readsTables reports a statement that reads table rows or the catalog.
func readsTables(st ast.StmtNode) bool {
	switch x := st.(type) {
	case *ast.SelectStmt:
		return x.From != nil || plan.HasSubquery(x)
	case *ast.SetOprStmt, *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		return true
	case *ast.ExecuteStmt:
		return true // SQL-level EXECUTE: its statement may read
	case *ast.ShowStmt:
		// SHOW of schema objects reads the catalog, which DDL in the log changes; SHOW WARNINGS,
		// VARIABLES, STATUS and the like read none and must not wait (SHOW WARNINGS after a wait
		// that timed out would time out again).
		switch x.Tp {
		case ast.ShowDatabases, ast.ShowTables, ast.ShowTableStatus, ast.ShowColumns, ast.ShowIndex,
			ast.ShowCreateTable, ast.ShowCreateView, ast.ShowCreateDatabase:
			return true
		}
	}
	return false
}

// Session state tracking of GTIDs (session_track_gtids): the OK packet of a statement that
// committed a transaction with writes carries SESSION_TRACK_GTIDS, as MySQL 8 sends it: OWN_GTID
// the transaction's own GTID, ALL_GTIDS this node's whole @@gtid_executed at that moment. OK
// packets only: the end of a result set carries no session state here (a SELECT commits no GTID
// except through a function with side effects, which Kiln does not have).

const sessionTrackGTIDs = 3 // SESSION_TRACK_GTIDS

// gtidWriter adds the GTID entry to the OK packet after a commit.
type gtidWriter struct {
	proto.ResultWriter
	s    *Session
	all  bool
	seen uint64 // s.lastPos already reported (or current when the statement began)
}

// gtidTracker wraps w when the session tracks GTIDs.
func (s *Session) gtidTracker(w proto.ResultWriter) proto.ResultWriter {
	if s.db.cfg.LogPosition == nil {
		return w
	}
	mode := types.ToString(s.memoVal(&s.trackGTIDs, trackGTIDsVar))
	if mode == "OFF" || mode == "" {
		return w
	}
	return &gtidWriter{ResultWriter: w, s: s, all: mode == "ALL_GTIDS", seen: s.lastPos}
}

func (g *gtidWriter) OK(ok proto.OK, more bool) error {
	if pos := g.s.lastPos; pos != 0 && pos != g.seen {
		g.seen = pos
		var text string
		if g.all {
			text = g.s.db.gtidExecuted().Compact()
		} else {
			text = gtid.Range(g.s.db.cfg.LogPosition.ClusterUUID(), pos, pos).Compact()
		}
		ok.SessionState = appendGTIDState(ok.SessionState, text)
	}
	return g.ResultWriter.OK(ok, more)
}

// appendGTIDState appends a SESSION_TRACK_GTIDS entry: the type, then its data as a length-encoded
// string; the data is the encoding specification (0: the GTID set as text) and the length-encoded
// text.
func appendGTIDState(b []byte, text string) []byte {
	data := append([]byte{0}, lenenc(uint64(len(text)))...)
	data = append(data, text...)
	b = append(b, sessionTrackGTIDs)
	b = append(b, lenenc(uint64(len(data)))...)
	return append(b, data...)
}

// lenenc is a protocol length-encoded integer (internal/mysql has its own; sql must not import it).
func lenenc(n uint64) []byte {
	switch {
	case n < 251:
		return []byte{byte(n)}
	case n < 1<<16:
		return []byte{0xfc, byte(n), byte(n >> 8)}
	case n < 1<<24:
		return []byte{0xfd, byte(n), byte(n >> 8), byte(n >> 16)}
	}
	return binary.LittleEndian.AppendUint64([]byte{0xfe}, n)
}
