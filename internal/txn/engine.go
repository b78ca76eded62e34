package txn

import "github.com/kiln-db/kiln/internal/engine"

// The engine seam: what transactions (and, through Manager.Engine, the SQL layer's catalog loads,
// DDL scans and logical operations) use of the storage engine, defined here at its consumer so
// that a second engine (DESIGN.md's B-tree) can sit under txn beside pebble. *engine.Engine
// implements Engine; writes reach an engine only through the commit path (repl applies records
// into engine batches through Applier, whose writes go to a Batch).
//
// Two of the types in these signatures are the engine package's, not interfaces of this one:
//   - engine.Iterator, the cursor, is a concrete struct on purpose: every row of every scan calls
//     it several times and its methods inline to pebble's, where an interface would cost a dynamic
//     call per method per row (BenchmarkIterScan). A second engine adds its cursor inside it.
//   - engine.Snapshot is an interface the engine package defines, because Go matches a method's
//     result type exactly: an engine's NewSnapshot can satisfy Engine only by returning a type the
//     engine itself can name.
//
// The point-read path (Txn.Get, GetLatest, LatestReader.Get) costs one interface call more than a
// concrete engine would, and no allocation (BenchmarkPointGet).

// Reader reads committed state: a point read (a copy of the value) and an ordered iterator over
// [lower, upper).
type Reader interface {
	Get(key []byte) ([]byte, bool, error)
	NewIter(lower, upper []byte) (engine.Iterator, error)
}

// Engine is the storage engine as txn uses it: reads of the latest applied state, and snapshots
// (consistent read views of one moment, closed by their user) for the transactions' read views.
type Engine interface {
	Reader
	NewSnapshot() engine.Snapshot
	// Generation counts the changes made visible in the latest state (engine.Engine.Generation):
	// LatestReader keeps one iterator for as long as it has not moved.
	Generation() uint64
}

var (
	_ Engine = (*engine.Engine)(nil)
	_ Reader = engine.Snapshot(nil)
)
