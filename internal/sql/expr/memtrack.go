package expr

import (
	"unsafe"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Statement memory accounting (package memory). The operators that hold rows until the statement
// ends count them: sort, hash aggregation (groups, DISTINCT sets, GROUP_CONCAT and JSON aggregate
// buffers), DISTINCT, the cached inner sides of joins, and every materialised result (derived
// tables, subqueries, UNION parts, the rows an INSERT ... SELECT / UPDATE / DELETE collects).
// Nothing is given back before the statement ends: the tracker is closed then (Env.CloseMem).

// valueBytes and rowOverhead are the fixed costs counted per value and per row (a slice header and
// the allocator's rounding); string payloads are added to them.
const (
	valueBytes  = int64(unsafe.Sizeof(types.Value{}))
	rowOverhead = 32
	// MapEntryOverhead is a Go map entry's cost beyond its key bytes (string header, bucket share).
	MapEntryOverhead = 48
)

// RowBytes approximates the memory a row holds.
func RowBytes(r []types.Value) int64 {
	n := rowOverhead + int64(len(r))*valueBytes
	for i := range r {
		n += int64(len(r[i].S))
	}
	return n
}

// Grow counts n more bytes against the statement's quota (kiln_mem_quota_query) and the server's
// account; past either it returns 3170 and the statement fails.
func (env *Env) Grow(n int64) error { return env.Tracker().Grow(n) }

// Tracker returns the statement's memory tracker, created at first use.
func (env *Env) Tracker() *memory.Tracker {
	if env.Mem == nil {
		env.Mem = env.Sess.NewMemTracker()
	}
	return env.Mem
}

// GrowRow counts a row the statement keeps.
func (env *Env) GrowRow(r []types.Value) error { return env.Grow(RowBytes(r)) }

// CloseMem returns the statement's memory to the server account when it ends.
func (env *Env) CloseMem() {
	if env.Mem != nil {
		env.Mem.Close()
	}
}
