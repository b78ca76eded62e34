package repl

import (
	"errors"
	"fmt"
)

// The commit path's outcomes other than success. The server maps them to MySQL error codes; repl
// stays protocol-neutral. Each says whether the commit is known not to have happened.
var (
	// ErrStopped: the node stopped (shutdown or a fatal log/engine error) while the commit waited.
	// The outcome follows the log: the commit stands if it reached a majority's log.
	ErrStopped = errors.New("repl: node stopped; the commit's outcome follows the log")
	// ErrStaleEpoch: the transaction began under a leadership that has ended (this node lost and
	// maybe regained leadership since). Its reads may predate another leader's writes, so it is
	// refused before anything is proposed: it did not commit and may be retried.
	ErrStaleEpoch = errors.New("repl: leadership changed since the transaction began; it was rolled back")
	// ErrOutcomeUnknown: the commit was appended to this leader's log, but the node stopped leading
	// (it lost its quorum, or a newer leader appeared) before the entry committed. It is committed if
	// it reached a majority's log; the new leader's log decides. Never a silent success.
	ErrOutcomeUnknown = errors.New("repl: commit outcome unknown: this node stopped leading before the commit reached a majority")
	// ErrNotCommitted: the entry was replaced in the log by a newer leader's entry at the same
	// index: it is known not to have committed.
	ErrNotCommitted = errors.New("repl: the commit was superseded by a newer leader's log; it did not commit")
)

// NotLeaderError: this node does not lead, so it takes no commits. Leader is the current leader's
// raft id (0 if none is known).
type NotLeaderError struct{ Leader uint64 }

func (e *NotLeaderError) Error() string {
	if e.Leader == 0 {
		return "repl: not the leader and no leader is known"
	}
	return fmt.Sprintf("repl: not the leader (leader is node %d)", e.Leader)
}

// DiskFullError: the log's filesystem is below its reserve; nothing was proposed.
type DiskFullError struct{ Free, Reserve uint64 }

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("repl: disk full (%d bytes free, reserve %d)", e.Free, e.Reserve)
}

// InterruptedError: the caller's context ended while the commit waited; the commit itself completed
// (it is durable and applied at Index) because a commit's wait never ends early.
type InterruptedError struct{ Index uint64 }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("repl: interrupted while waiting for the commit, which completed at log index %d", e.Index)
}
