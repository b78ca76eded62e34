package sql

import (
	"context"
	"errors"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// readConcernVar is kiln_read_concern, read before every statement.
var readConcernVar = sysvar.Must("kiln_read_concern")

// readConcern runs before a statement that reads tables under kiln_read_concern = linearizable:
// it asks the cluster for a read index (a quorum confirms the leader's commit index, on the leader
// or through it from a follower) and waits until this node has applied it, so the statement sees
// every commit acknowledged before it started, wherever it runs. The wait is bounded by
// kiln_read_after_gtid_timeout (3024 past it; KILL QUERY and max_execution_time end it too). A node
// that cannot reach a quorum never answers a linearizable read: it times out instead of serving a
// stale one. local (the default) reads this node's applied state, which is always committed.
func (s *Session) readConcern(ctx context.Context, st ast.StmtNode) error {
	lp := s.db.cfg.LogPosition
	if lp == nil || !readsTables(st) || s.getSysVar(readConcernVar, false).S != "linearizable" {
		return nil
	}
	timeout := time.Duration(types.ToIntLenient(s.getSysVar(readAfterTimeoutVar, false))) * time.Second
	err := s.boundedWait(ctx, timeout, func(wctx context.Context) error {
		idx, err := lp.ReadIndex(wctx)
		if err != nil {
			return err
		}
		return lp.WaitApplied(wctx, idx)
	})
	switch {
	case err == nil:
		// What was waited for may be DDL: the catalog loaded before the wait may be older.
		return s.db.syncCluster()
	case errors.Is(err, errGTIDWaitTimeout):
		return sqlerr.New(sqlerr.ErrQueryTimeout, "Query execution was interrupted, kiln_read_after_gtid_timeout (%s) exceeded before a quorum confirmed the read position of a linearizable read (kiln_read_concern); this node may be cut off from the cluster's majority", timeout)
	}
	return err
}
