package txn

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
)

// Early lock release (controlled lock violation: Aether, VLDB 2010; Graefe et al., SIGMOD 2013).
//
// With it on (Manager.SetEarlyRelease), a transaction's row locks are released as soon as its
// record has its place in the log, not once it is durable and applied. Its writes stay in the
// pending set until they are applied, and the next transaction that locks one of those rows reads
// the pending version there. The invariants, each kept by the code named:
//  1. No client is acknowledged before its own record, and with it everything before it in the log,
//     is durable (single node: fsynced; cluster: on a majority) and applied: Commit returns only after
//     the committer's Wait, as without early release.
//  2. Plain (snapshot) reads never see a pending version: Get and snapshot iterators read the engine
//     only. Current reads (GetLatest, latest iterators: the reads under row locks) see them.
//  3. A transaction that read a pending version depends on it (Txn.deps). Its own record is placed
//     with those dependencies, and the committer refuses it if one of them never reached the log
//     (repl.Node.Place); once both are in the log, a truncation of the earlier one truncates the
//     later one too (raft's log matching), so a record never survives a write it was computed from.
//  4. A transaction that read a pending version and writes nothing still waits, before its COMMIT
//     returns, until what it read is durable and applied; if that failed, so does its COMMIT.
//  5. Only plain writes are released early: a record with range deletions or logical operations
//     (DDL), or with more than MaxEarlyReleaseKeys point writes, holds its locks to the end, as
//     before.
// Locks themselves are unchanged (FIFO queues, deadlock detection, lock wait timeouts): they are just
// released earlier.

// Placer is a Committer that can fix a record's place in the log before it is durable (repl.Node,
// or the server's wrapper of it, which turns repl's errors into MySQL's). Without one, a Manager
// never releases early. after lists records this one read from (Placeds the same Placer returned).
type Placer interface {
	Place(ctx context.Context, rec []byte, async bool, epoch uint64, after []Placed) (Placed, error)
}

// Placed is a record whose place in the log is fixed; Wait returns once it is durable and
// applied, with its position, or with its failure. It is an alias of a type literal so that
// repl.Waiter is the same type and repl.Node is a Placer without either package importing the
// other.
type Placed = interface {
	Wait(ctx context.Context) (uint64, error)
}

// pendingWrites holds the latest placed-but-not-applied version of each key written by
// transactions that released their locks early.
type pendingWrites struct {
	n    atomic.Int64 // entries: current reads skip the lock while it is 0
	mu   sync.RWMutex
	tree *btree.BTreeG[pendingEntry]
}

type pendingEntry struct {
	key string
	val []byte
	del bool
	tk  Placed
}

func newPendingWrites() *pendingWrites {
	return &pendingWrites{tree: btree.NewG[pendingEntry](16, func(a, b pendingEntry) bool { return a.key < b.key })}
}

// get returns key's pending version.
func (p *pendingWrites) get(key []byte) (pendingEntry, bool) {
	if p.n.Load() == 0 {
		return pendingEntry{}, false
	}
	p.mu.RLock()
	e, ok := p.tree.Get(pendingEntry{key: string(key)})
	p.mu.RUnlock()
	return e, ok
}

// add makes the write set's point writes the pending versions of their keys. The caller holds the
// keys' row locks, so no other transaction adds a version of them meanwhile.
func (p *pendingWrites) add(ws *WriteSet, tk Placed) {
	p.mu.Lock()
	ws.pts.ascend(func(e wsEntry) bool {
		if _, replaced := p.tree.ReplaceOrInsert(pendingEntry{key: e.key, val: e.val, del: e.del, tk: tk}); !replaced {
			p.n.Add(1)
		}
		return true
	})
	p.mu.Unlock()
}

// remove drops the versions tk added that no later transaction replaced: once tk is applied the
// engine has them; if it failed, they never existed.
func (p *pendingWrites) remove(ws *WriteSet, tk Placed) {
	p.mu.Lock()
	ws.pts.ascend(func(e wsEntry) bool {
		if cur, ok := p.tree.Get(pendingEntry{key: e.key}); ok && cur.tk == tk {
			p.tree.Delete(cur)
			p.n.Add(-1)
		}
		return true
	})
	p.mu.Unlock()
}

// collect returns the pending versions in [lo, hi), ascending.
func (p *pendingWrites) collect(lo, hi []byte) []pendingEntry {
	if p.n.Load() == 0 {
		return nil
	}
	var out []pendingEntry
	p.mu.RLock()
	p.tree.AscendRange(pendingEntry{key: string(lo)}, pendingEntry{key: string(hi)}, func(e pendingEntry) bool {
		out = append(out, e)
		return true
	})
	p.mu.RUnlock()
	return out
}

// Pending is the number of keys with a pending version (a gauge for status and tests).
func (m *Manager) Pending() int { return int(m.pending.n.Load()) }

// PendingReads counts current reads that returned a pending version (one per transaction and
// record read from): how often early release let a transaction go ahead of a durable commit.
func (m *Manager) PendingReads() uint64 { return m.pendingReads.Load() }

// SetEarlyRelease turns early lock release on or off for transactions that commit from now on. It
// has no effect unless the Manager's committer is a Placer.
func (m *Manager) SetEarlyRelease(on bool) { m.early.Store(on) }

// EarlyRelease reports whether early lock release is on (SetEarlyRelease).
func (m *Manager) EarlyRelease() bool { return m.early.Load() }

// dependOn records that the transaction read tk's pending version.
func (t *Txn) dependOn(tk Placed) {
	for _, d := range t.deps {
		if d == tk {
			return
		}
	}
	t.deps = append(t.deps, tk)
	t.m.pendingReads.Add(1)
}

// waitDeps waits until every pending version the transaction read is durable and applied (duty 4).
func (t *Txn) waitDeps(ctx context.Context) error {
	// Not ctx: the wait always ends (applied, failed or the node stopped), and a read dependency
	// that committed is not this transaction's commit to report as interrupted.
	for _, d := range t.deps {
		if _, err := d.Wait(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// earlyReleasable reports whether the write set holds only point writes (duty 5), and at most
// MaxEarlyReleaseKeys of them.
func (w *WriteSet) earlyReleasable() bool {
	return len(w.ranges) == 0 && len(w.logical) == 0 && w.pts.Len() <= MaxEarlyReleaseKeys
}

// MaxEarlyReleaseKeys bounds the write sets released early. Early release pays for hot rows,
// which small transactions update; a bulk write (a 1,024-row INSERT writes 2-3 keys a row) would
// put thousands of versions into the pending set and take them out again under its one mutex,
// and keep that set non-empty, so that every current read of every session searches it, while
// nobody waits for the fresh keys it locked. Such a commit keeps its locks until it is applied,
// as without early release (about 8% of a LinkBench load's server CPU went to the pending set).
const MaxEarlyReleaseKeys = 256
