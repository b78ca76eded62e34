package sql

import (
	"unsafe"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Statement memory accounting (package memory). The operators that hold rows until the statement
// ends count them: sort, hash aggregation (groups, DISTINCT sets, GROUP_CONCAT and JSON aggregate
// buffers), DISTINCT, the cached inner sides of joins, and every materialised result (derived
// tables, subqueries, UNION parts, the rows an INSERT ... SELECT / UPDATE / DELETE collects).
// Nothing is given back before the statement ends: the tracker is closed then (Env.closeMem).

// valueBytes and rowOverhead are the fixed costs counted per value and per row (a slice header and
// the allocator's rounding); string payloads are added to them.
const (
	valueBytes  = int64(unsafe.Sizeof(types.Value{}))
	rowOverhead = 32
	// mapEntryOverhead is a Go map entry's cost beyond its key bytes (string header, bucket share).
	mapEntryOverhead = 48
)

// rowBytes approximates the memory a row holds.
func rowBytes(r []types.Value) int64 {
	n := rowOverhead + int64(len(r))*valueBytes
	for i := range r {
		n += int64(len(r[i].S))
	}
	return n
}

// grow counts n more bytes against the statement's quota (kiln_mem_quota_query) and the server's
// account; past either it returns 3170 and the statement fails.
func (env *Env) grow(n int64) error { return env.tracker().Grow(n) }

// tracker returns the statement's memory tracker, created at first use.
func (env *Env) tracker() *memory.Tracker {
	if env.mem == nil {
		env.mem = env.s.NewMemTracker()
	}
	return env.mem
}

// growRow counts a row the statement keeps.
func (env *Env) growRow(r []types.Value) error { return env.grow(rowBytes(r)) }

// closeMem returns the statement's memory to the server account when it ends.
func (env *Env) closeMem() {
	if env.mem != nil {
		env.mem.Close()
	}
}
