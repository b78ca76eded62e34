// Package memory accounts the memory that statements and connections hold on purpose (rows a sort
// or a hash aggregation keeps, GROUP_CONCAT buffers, long data of prepared statements), so that a
// statement which would exhaust the process fails with a clean error instead of the process dying.
//
// Two levels:
//   - Account is the server-wide account: the sum of every Tracker's and connection's reservations,
//     against the server's memory limit (kiln serve --memory-limit, also Go's soft memory limit).
//     A reservation that would pass the limit, or that arrives while the Go heap's live bytes are
//     already near it, is refused.
//   - Tracker is one statement's account against its quota (kiln_mem_quota_query). It reserves from
//     the Account in chunks, so most Grow calls touch no shared state.
//
// Sizes are approximate (value bytes plus a fixed per-row overhead, see the callers): the point is
// a bound on what one statement can hold, cheaply computed, not exact bookkeeping.
package memory

import (
	"runtime/metrics"
	"sync/atomic"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Account is the server-wide memory account. The zero value has no limit. It is safe for
// concurrent use.
type Account struct {
	limit   atomic.Int64 // bytes; 0: no limit
	used    atomic.Int64
	peak    atomic.Int64
	refused atomic.Int64
	// liveHeap reads the Go heap's live bytes (after the last GC); a variable for tests.
	liveHeap func() int64
}

// NewAccount returns an account with limit bytes (0: unlimited).
func NewAccount(limit int64) *Account {
	a := &Account{liveHeap: readLiveHeap}
	a.limit.Store(limit)
	return a
}

// heapHeadroom is the share of the limit the live heap may reach before reservations are refused:
// past it the garbage collector is already working against the limit, and a large new allocation
// is what pushes the process over.
const heapHeadroom = 0.9

// SetLimit changes the limit (0: unlimited).
func (a *Account) SetLimit(n int64) { a.limit.Store(n) }

// Limit is the limit in bytes (0: unlimited). The figures of a nil Account are 0.
func (a *Account) Limit() int64 {
	if a == nil {
		return 0
	}
	return a.limit.Load()
}

// Used is the bytes currently reserved.
func (a *Account) Used() int64 {
	if a == nil {
		return 0
	}
	return a.used.Load()
}

// Peak is the largest Used seen.
func (a *Account) Peak() int64 {
	if a == nil {
		return 0
	}
	return a.peak.Load()
}

// Refused counts the reservations refused (each a statement or a long-data chunk that failed).
func (a *Account) Refused() int64 {
	if a == nil {
		return 0
	}
	return a.refused.Load()
}

// Reserve takes n bytes from the account. It refuses (returns false and counts it) when the
// account would pass its limit, or when the Go heap's live bytes (as of the last collection)
// already pass 90% of it: memory nobody accounted for (caches, connections, garbage the collector
// cannot free) is then what fills the process, and a new large allocation is what would end it.
// A nil account admits everything.
func (a *Account) Reserve(n int64) bool { return a.reserve(n, true) }

func (a *Account) reserve(n int64, count bool) bool {
	if a == nil || n <= 0 {
		return true
	}
	limit := a.limit.Load()
	u := a.used.Add(n)
	if limit > 0 && (u > limit || (a.liveHeap != nil && float64(a.liveHeap()) > heapHeadroom*float64(limit))) {
		a.used.Add(-n)
		if count {
			a.refused.Add(1)
		}
		return false
	}
	for {
		p := a.peak.Load()
		if u <= p || a.peak.CompareAndSwap(p, u) {
			break
		}
	}
	return true
}

// Release returns n bytes reserved before.
func (a *Account) Release(n int64) {
	if a == nil || n <= 0 {
		return
	}
	a.used.Add(-n)
}

// CapacityError is the error a refused reservation becomes: 3170 naming the limit.
func (a *Account) CapacityError() error {
	return sqlerr.New(sqlerr.ErrCapacityExceeded,
		"Memory capacity of %d bytes for 'kiln_memory_limit' exceeded. The server is near its memory limit; the statement was not run to completion",
		a.Limit())
}

func readLiveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// chunkBytes is how much a Tracker reserves from its Account at a time.
const chunkBytes = 1 << 20

// Tracker accounts one statement's memory against its quota and the server-wide Account. It is
// used by the statement's goroutine only. The zero value (and nil) tracks nothing.
type Tracker struct {
	acct     *Account
	quota    int64 // bytes; 0: no quota
	used     int64
	reserved int64 // taken from acct, >= used
	peak     int64
}

// NewTracker returns a tracker with quota bytes (0: none) reserving from acct (nil: none).
func NewTracker(acct *Account, quota int64) *Tracker {
	return &Tracker{acct: acct, quota: quota}
}

// Grow accounts n more bytes. Past the quota it returns 3170 naming kiln_mem_quota_query; when the
// server account refuses, 3170 naming kiln_memory_limit. Nothing is counted when it fails.
func (t *Tracker) Grow(n int64) error {
	if t == nil || n <= 0 {
		return nil
	}
	if t.quota > 0 && t.used+n > t.quota {
		return sqlerr.New(sqlerr.ErrCapacityExceeded,
			"Memory capacity of %d bytes for 'kiln_mem_quota_query' exceeded. The statement needs more memory than its quota; raise kiln_mem_quota_query or make it hold fewer rows",
			t.quota)
	}
	if t.used+n > t.reserved && t.acct != nil {
		// A whole chunk when the account has room for it, else exactly what is needed, so a small
		// statement still runs while the account is nearly full.
		need := t.used + n - t.reserved
		chunk := (need + chunkBytes - 1) / chunkBytes * chunkBytes
		switch {
		case t.acct.reserve(chunk, false):
			need = chunk
		case !t.acct.Reserve(need):
			return t.acct.CapacityError()
		}
		t.reserved += need
	}
	t.used += n
	t.peak = max(t.peak, t.used)
	return nil
}

// Shrink gives back n bytes the statement no longer holds (a sort's rows once sent...).
func (t *Tracker) Shrink(n int64) {
	if t == nil {
		return
	}
	t.used = max(t.used-n, 0)
}

// Used is the bytes the statement holds now; Peak the most it held.
func (t *Tracker) Used() int64 {
	if t == nil {
		return 0
	}
	return t.used
}

// Peak is the most the statement held at once.
func (t *Tracker) Peak() int64 {
	if t == nil {
		return 0
	}
	return t.peak
}

// Close returns everything to the server account; the tracker can be used again from zero.
func (t *Tracker) Close() {
	if t == nil {
		return
	}
	t.acct.Release(t.reserved)
	t.used, t.reserved = 0, 0
}
