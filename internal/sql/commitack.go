package sql

import (
	"context"

	"github.com/kiln-db/kiln/internal/sql/sysvar"
)

// commitAckVar is kiln_commit_ack, read after every commit that wrote to the log.
var commitAckVar = sysvar.Must("kiln_commit_ack")

// AppliedAcker is the part of a LogPosition that waits for the commit ack level "applied": it
// returns once a majority of the cluster's engine-bearing voters has applied index, or with a
// MySQL error (the server maps the node's outcomes: the commit itself stands in every case). A
// LogPosition without it (single-node tests) acknowledges at "durable".
type AppliedAcker interface {
	WaitMajorityApplied(ctx context.Context, index uint64) error
}

// ackApplied runs after a commit at pos returned (durable on a majority, applied here, locks
// released) and before the client is told: under kiln_commit_ack = applied it waits until a
// majority of the voters with an engine has applied pos too, so a read on any of them right after
// the acknowledgement sees the commit (PostgreSQL's remote_apply). The row locks are not held
// meanwhile: the commit is already visible here, only the acknowledgement waits. durable (the
// default) acknowledges at once. DDL (runDDL) and account statements (runACL) call it after their
// commit too, once their metadata locks and the DDL mutex are released.
func (s *Session) ackApplied(ctx context.Context, pos uint64) error {
	if pos == 0 || s.getSysVar(commitAckVar, false).S != "applied" {
		return nil
	}
	a, ok := s.db.cfg.LogPosition.(AppliedAcker)
	if !ok {
		return nil
	}
	return a.WaitMajorityApplied(ctx, pos)
}
