package txn

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// LockMode is the mode of a row lock.
type LockMode uint8

// Row lock modes. Shared is compatible only with Shared; Exclusive with nothing. The numeric order is
// the strength order (a held mode >= the requested one satisfies the request).
const (
	LockShared    LockMode = 1
	LockExclusive LockMode = 2
)

func (m LockMode) String() string {
	switch m {
	case LockShared:
		return "S"
	case LockExclusive:
		return "X"
	}
	return fmt.Sprintf("LockMode(%d)", uint8(m))
}

// compatible reports whether a and b may be held on one key by two different owners.
func compatible(a, b LockMode) bool { return a == LockShared && b == LockShared }

// LockConfig configures a LockManager.
type LockConfig struct {
	// DeadlockDetect is innodb_deadlock_detect. Its zero value is false (detection off); use
	// DefaultLockConfig for the InnoDB default (on). It can be changed at runtime with SetDeadlockDetect.
	DeadlockDetect bool
	// MaxDetectSteps bounds the wait-for-graph search run for one blocked request, in transactions
	// visited (<= 0 means the default, 1000). A search that exceeds it reports a deadlock, as InnoDB does when its
	// search gets too deep or too long.
	MaxDetectSteps int
}

// DefaultLockConfig returns the InnoDB defaults: detection on, a search bound of 1000 transactions.
func DefaultLockConfig() LockConfig {
	return LockConfig{DeadlockDetect: true, MaxDetectSteps: defaultMaxDetectSteps}
}

const defaultMaxDetectSteps = 1000

// LockStats is what SHOW STATUS reports about row locks. Each field is read atomically but the fields
// are not one snapshot.
type LockStats struct {
	Locks        int64         // row locks held now, counted per (owner, key); an upgrade does not add one
	CurrentWaits int64         // requests blocked now (Innodb_row_lock_current_waits)
	Waits        uint64        // requests that had to block, ever (Innodb_row_lock_waits)
	Deadlocks    uint64        // requests refused with 1213: cycles found plus searches over the bound
	Timeouts     uint64        // requests refused with 1205, including wait=0 (NOWAIT-like) refusals
	WaitTime     time.Duration // total time spent blocked, whatever the outcome (Innodb_row_lock_time)
}

// LockManager is the row lock table: InnoDB-style shared/exclusive record locks held by an owner (a
// transaction id) until it calls ReleaseAll, with FIFO queues, lock wait timeouts and deadlock detection.
// A key is any byte string, typically an encoded row key; it need not exist in storage (locking a key
// about to be inserted is how duplicate inserts are serialized). There are no gap or next-key locks.
//
// Duties (the contract):
//
//  1. Lock(ctx, owner, key, mode, wait) returns nil once owner holds key in mode or a stronger one. A
//     request already satisfied by what owner holds returns at once (re-entry never waits, even behind a
//     queue). Shared -> Exclusive is an upgrade: granted at once if owner is the only holder, otherwise it
//     queues as described under Fairness. There is no downgrade: a held X stays X.
//  2. A request that cannot be granted blocks for at most wait: wait == 0 fails at once, wait < 0 waits
//     without limit. On failure the request leaves no trace (it is removed from the queue and whoever it
//     was blocking is woken); locks owner already held stay held. The errors are:
//     1205 (ER_LOCK_WAIT_TIMEOUT, HY000) when wait runs out or wait == 0;
//     1213 (ER_LOCK_DEADLOCK, 40001) when waiting would close a cycle, or the search exceeds its bound;
//     ctx.Err() wrapped (errors.Is works) when ctx ends first; the caller maps it to 1317.
//     The SQL layer, not the lock manager, decides what a failure rolls back (InnoDB: the statement on
//     1205, the whole transaction on 1213).
//     If a grant races with a timeout or cancellation, the grant wins: Lock returns nil and the lock is
//     held. ctx is only consulted while waiting; a lock that is free is granted even if ctx is done.
//  3. ReleaseAll(owner) releases every lock owner holds, in O(locks held), and grants the requests that
//     can now proceed, in queue order. Calling it for an owner with no locks is a cheap no-op.
//  4. Stats and WaitingFor are safe at any time from any goroutine; WaitingFor returns a copy.
//  5. The caller's part: an owner is one transaction and makes one request at a time (no concurrent Lock
//     calls for one owner, and no ReleaseAll while its Lock is blocked: cancel the ctx first). Owner ids
//     are not reused while the previous owner with that id still holds locks. The key slice is copied,
//     so the caller may reuse it after Lock returns.
//
// Fairness: each key has one FIFO queue, and a request that cannot be granted at once joins its tail.
// A new request (from an owner that holds nothing on the key) is granted at once only if it is
// compatible with every holder and the queue is empty, so a shared request never overtakes a queued
// exclusive one and writers do not starve. When a lock is released or a waiter leaves, the queue is
// granted from its head until the first request that is still incompatible (several shared requests
// are granted together; nothing behind a blocked request is granted). An upgrade that must wait is
// queued ahead of every ordinary waiter, behind earlier upgraders: the upgrader keeps its S while it
// waits, so no exclusive waiter could be granted before it anyway, and queueing the upgrade at the tail
// would only build a cycle with such a waiter. Two owners that both hold S and both ask for X deadlock;
// the second to ask gets 1213.
//
// Deadlock policy: when a request must wait and detection is on, the manager searches the wait-for
// graph from the requester before it blocks. Owner A waits for owner B if B holds the key A waits on in
// an incompatible mode, or B is queued ahead of A on that key in an incompatible mode (FIFO makes A wait
// for it). If the search gets back to the requester, the requester is the victim and gets 1213 at once;
// nobody else is disturbed. InnoDB instead rolls back the "lighter" transaction of the cycle (fewer
// rows modified and locks held). Choosing the requester is deliberate: it needs no way to abort some
// other goroutine's wait asynchronously, it is decided entirely on the requester's own call path, the
// requester is the one whose request closed the cycle, and a deadlock is reported to exactly one
// transaction, once. The cost is that a large transaction can be the victim of a small one; clients
// must retry on 1213 in any case. The search visits at most MaxDetectSteps edges; a search that would
// visit more is reported as a deadlock too (InnoDB does the same with its depth bound): a wait chain
// that long is pathological, and giving up early is cheaper than letting it wait out the timeout. With
// detection off (innodb_deadlock_detect=OFF, for very high concurrency where the search itself is the
// bottleneck) only the lock wait timeout resolves deadlocks, so wait should not be < 0 then.
//
// Why the search is sound without a global lock over the table: every waiter is put in its key's queue
// first and registered in a global waits-for registry second, and the search runs holding the registry
// mutex, so searches are serialized and see every earlier registered waiter. Of the waiters forming a
// cycle, the last one to register therefore sees all the others and finds the cycle (no cycle is missed
// within the bound). An owner found in the registry is blocked in Lock (even once granted, it must
// take the registry mutex to leave), and a blocked owner releases nothing, so the edges the search reads
// do not go stale while it runs, except when a waiter gives up concurrently (timeout, ctx): then a cycle
// that this give-up was just breaking may still be reported. The requester's own grant is re-checked
// before it is made the victim.
//
// Concurrency and bounds: the table is split into 256 shards by a seeded hash of the key, each with its
// own mutex and map from key to entry, so requests on unrelated rows do not contend. An entry exists
// only while it has a holder or a waiter (it is deleted when the last one leaves), so memory is
// proportional to the locks held and requests waiting. The holders and the queue of one key are slices
// scanned linearly, so a request costs O(holders + waiters of its key): small, except on a row that
// very many transactions hold in share mode at once. Each owner's held entries are listed in a
// per-owner record (in 64 owner shards), so ReleaseAll visits only those; records of up to 1024 entries
// are pooled for reuse, larger ones are left to the GC. A waiter blocks on its own
// channel, and on a time.Timer (stopped on return) only if wait > 0. The registry is one map protected
// by one mutex, touched only by requests that block. Lock order is registry -> one key shard at a
// time -> owner shard; nothing ever holds two key shards or takes the registry under a shard mutex. The
// uncontended path (Lock on a free key, ReleaseAll) takes one key-shard and one owner-shard mutex each
// and allocates the key copy and the entry (two allocations); per-owner records are pooled.
type LockManager struct {
	seed   maphash.Seed
	shards [lockShardCount]lockShard
	owners [ownerShardCount]ownerShard

	detect   atomic.Bool
	maxSteps int

	// wmu protects waits and the search scratch below.
	wmu     sync.Mutex
	waits   map[uint64]*lockWaiter // owner -> its queued request
	visited map[uint64]struct{}
	stack   []uint64
	scratch []uint64

	currentWaits atomic.Int64
	nWaits       atomic.Uint64
	nDeadlocks   atomic.Uint64
	nTimeouts    atomic.Uint64
	waitNanos    atomic.Int64
}

const (
	lockShardCount  = 256 // power of two
	ownerShardCount = 64  // power of two
	// ownerRecordKeep is the largest per-owner record (in entries) kept for reuse after ReleaseAll.
	ownerRecordKeep = 1024
)

// lockShard is one slice of the lock table, padded to a cache line.
type lockShard struct {
	mu   sync.Mutex
	m    map[string]*lockEntry
	held atomic.Int64 // holders across this shard's entries; written under mu
	_    [40]byte
}

// ownerShard maps owners to the entries they hold, padded to a cache line.
type ownerShard struct {
	mu sync.Mutex
	m  map[uint64]*ownerLocks
	_  [48]byte
}

// ownerLocks is one owner's record of held entries. An entry is appended when the owner becomes one of
// its holders and stays valid (in its shard's map) until the owner releases it.
type ownerLocks struct {
	entries []*lockEntry
}

var ownerLocksPool = sync.Pool{New: func() any { return new(ownerLocks) }}

// lockEntry is the lock state of one key. All fields but key and shard are guarded by shard.mu.
type lockEntry struct {
	key     string
	shard   *lockShard
	holders []lockHolder  // at most one if any is Exclusive; no owner twice
	waiters []*lockWaiter // FIFO; upgraders first
	inline  [1]lockHolder // backing array of holders for the common single-holder case
}

type lockHolder struct {
	owner uint64
	mode  LockMode
}

// lockWaiter is one blocked request.
type lockWaiter struct {
	owner   uint64
	mode    LockMode // requested mode (Exclusive for an upgrade)
	upgrade bool     // owner already holds Shared on entry
	entry   *lockEntry
	ch      chan struct{} // closed when granted

	// Guarded by entry.shard.mu.
	queued  bool
	granted bool // set before ch is closed
}

// NewLockManager returns an empty lock table.
func NewLockManager(cfg LockConfig) *LockManager {
	m := &LockManager{
		seed:     maphash.MakeSeed(),
		maxSteps: cfg.MaxDetectSteps,
		waits:    make(map[uint64]*lockWaiter),
		visited:  make(map[uint64]struct{}),
	}
	if m.maxSteps <= 0 {
		m.maxSteps = defaultMaxDetectSteps
	}
	m.detect.Store(cfg.DeadlockDetect)
	for i := range m.shards {
		m.shards[i].m = make(map[string]*lockEntry)
	}
	for i := range m.owners {
		m.owners[i].m = make(map[uint64]*ownerLocks)
	}
	return m
}

// SetDeadlockDetect turns deadlock detection on or off (SET GLOBAL innodb_deadlock_detect). It affects
// requests that block after the call.
func (m *LockManager) SetDeadlockDetect(on bool) { m.detect.Store(on) }

func errLockWaitTimeout() error {
	return sqlerr.New(sqlerr.ErrLockWaitTimeout, "Lock wait timeout exceeded; try restarting transaction")
}

func errLockDeadlock() error {
	return sqlerr.New(sqlerr.ErrLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction")
}

func (m *LockManager) shardFor(key []byte) *lockShard {
	return &m.shards[maphash.Bytes(m.seed, key)&(lockShardCount-1)]
}

func (m *LockManager) ownerShardFor(owner uint64) *ownerShard {
	return &m.owners[(owner*0x9E3779B97F4A7C15)>>(64-6)]
}

// Lock acquires key for owner in mode, waiting at most wait (0 = fail at once if it must wait; <0 = no
// limit). See LockManager for the full contract.
func (m *LockManager) Lock(ctx context.Context, owner uint64, key []byte, mode LockMode, wait time.Duration) error {
	if mode != LockShared && mode != LockExclusive {
		return fmt.Errorf("txn: invalid lock mode %d", mode)
	}
	sh := m.shardFor(key)
	sh.mu.Lock()
	e := sh.m[string(key)]
	if e == nil {
		// Fast path: nobody holds or waits for key.
		e = &lockEntry{key: string(key), shard: sh}
		e.inline[0] = lockHolder{owner: owner, mode: mode}
		e.holders = e.inline[:1]
		sh.m[e.key] = e
		sh.held.Add(1)
		sh.mu.Unlock()
		m.recordHeld(owner, e)
		return nil
	}
	upgrade := false
	if i := e.holderIndex(owner); i >= 0 {
		h := &e.holders[i]
		if h.mode >= mode {
			sh.mu.Unlock()
			return nil // re-entry
		}
		if len(e.holders) == 1 {
			h.mode = LockExclusive // sole holder upgrades at once
			sh.mu.Unlock()
			return nil
		}
		upgrade = true
	} else if len(e.waiters) == 0 && e.compatibleWithHolders(mode) {
		e.holders = append(e.holders, lockHolder{owner: owner, mode: mode})
		sh.held.Add(1)
		sh.mu.Unlock()
		m.recordHeld(owner, e)
		return nil
	}
	if wait == 0 {
		sh.mu.Unlock()
		m.nTimeouts.Add(1)
		return errLockWaitTimeout()
	}
	w := &lockWaiter{owner: owner, mode: mode, upgrade: upgrade, entry: e, ch: make(chan struct{}), queued: true}
	if upgrade {
		i := 0
		for i < len(e.waiters) && e.waiters[i].upgrade {
			i++
		}
		e.waiters = append(e.waiters, nil)
		copy(e.waiters[i+1:], e.waiters[i:])
		e.waiters[i] = w
	} else {
		e.waiters = append(e.waiters, w)
	}
	m.currentWaits.Add(1)
	sh.mu.Unlock()
	return m.wait(ctx, w, wait)
}

// wait registers w, runs deadlock detection and blocks until w is granted or gives up.
func (m *LockManager) wait(ctx context.Context, w *lockWaiter, wait time.Duration) error {
	start := time.Now()
	m.wmu.Lock()
	m.waits[w.owner] = w
	if m.detect.Load() && m.deadlockLocked(w) {
		sh := w.entry.shard
		sh.mu.Lock()
		if !w.granted {
			m.dequeueLocked(w)
			sh.mu.Unlock()
			delete(m.waits, w.owner)
			m.wmu.Unlock()
			m.nDeadlocks.Add(1)
			return errLockDeadlock()
		}
		sh.mu.Unlock() // granted while we searched: no deadlock after all
	}
	m.wmu.Unlock()
	m.nWaits.Add(1)

	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case <-w.ch:
	case <-timeout:
		if !m.abandon(w) {
			m.nTimeouts.Add(1)
			err = errLockWaitTimeout()
		}
	case <-ctx.Done():
		if !m.abandon(w) {
			err = fmt.Errorf("txn: lock wait interrupted: %w", ctx.Err())
		}
	}
	m.wmu.Lock()
	if m.waits[w.owner] == w {
		delete(m.waits, w.owner)
	}
	m.wmu.Unlock()
	m.waitNanos.Add(int64(time.Since(start)))
	return err
}

// abandon takes w out of its queue unless it has been granted meanwhile; it reports whether it was.
func (m *LockManager) abandon(w *lockWaiter) (granted bool) {
	sh := w.entry.shard
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if w.granted {
		return true
	}
	m.dequeueLocked(w)
	return false
}

// dequeueLocked removes the ungranted w from its queue, grants whoever that unblocks and drops the entry
// if it is now unused. w.entry.shard.mu must be held.
func (m *LockManager) dequeueLocked(w *lockWaiter) {
	e := w.entry
	for i, x := range e.waiters {
		if x == w {
			copy(e.waiters[i:], e.waiters[i+1:])
			e.waiters[len(e.waiters)-1] = nil
			e.waiters = e.waiters[:len(e.waiters)-1]
			break
		}
	}
	w.queued = false
	m.currentWaits.Add(-1)
	m.grantLocked(e)
	if len(e.holders) == 0 && len(e.waiters) == 0 {
		delete(e.shard.m, e.key)
	}
}

// grantLocked grants e's queue from the head until the first request that must keep waiting.
// e.shard.mu must be held.
func (m *LockManager) grantLocked(e *lockEntry) {
	for len(e.waiters) > 0 {
		w := e.waiters[0]
		if w.upgrade {
			if len(e.holders) != 1 || e.holders[0].owner != w.owner { // others still hold S
				return
			}
			e.holders[0].mode = LockExclusive
		} else {
			if !e.compatibleWithHolders(w.mode) {
				return
			}
			e.holders = append(e.holders, lockHolder{owner: w.owner, mode: w.mode})
			e.shard.held.Add(1)
			m.recordHeld(w.owner, e) // before waking w, so its ReleaseAll finds the entry
		}
		copy(e.waiters, e.waiters[1:])
		e.waiters[len(e.waiters)-1] = nil
		e.waiters = e.waiters[:len(e.waiters)-1]
		w.queued = false
		w.granted = true
		m.currentWaits.Add(-1)
		close(w.ch)
	}
}

func (e *lockEntry) holderIndex(owner uint64) int {
	for i := range e.holders {
		if e.holders[i].owner == owner {
			return i
		}
	}
	return -1
}

// compatibleWithHolders reports whether mode is compatible with every holder (the requester holding
// nothing on e).
func (e *lockEntry) compatibleWithHolders(mode LockMode) bool {
	for i := range e.holders {
		if !compatible(e.holders[i].mode, mode) {
			return false
		}
	}
	return true
}

// recordHeld appends e to owner's record of held entries.
func (m *LockManager) recordHeld(owner uint64, e *lockEntry) {
	os := m.ownerShardFor(owner)
	os.mu.Lock()
	ol := os.m[owner]
	if ol == nil {
		ol = ownerLocksPool.Get().(*ownerLocks)
		os.m[owner] = ol
	}
	ol.entries = append(ol.entries, e)
	os.mu.Unlock()
}

// ReleaseAll releases every lock owner holds and wakes the waiters that can now proceed (FIFO).
func (m *LockManager) ReleaseAll(owner uint64) {
	os := m.ownerShardFor(owner)
	os.mu.Lock()
	ol := os.m[owner]
	if ol != nil {
		delete(os.m, owner)
	}
	os.mu.Unlock()
	if ol == nil {
		return
	}
	for i, e := range ol.entries {
		sh := e.shard
		sh.mu.Lock()
		if j := e.holderIndex(owner); j >= 0 {
			last := len(e.holders) - 1
			e.holders[j] = e.holders[last]
			e.holders = e.holders[:last]
			sh.held.Add(-1)
			m.grantLocked(e)
			if len(e.holders) == 0 && len(e.waiters) == 0 {
				delete(sh.m, e.key)
			}
		}
		sh.mu.Unlock()
		ol.entries[i] = nil
	}
	if cap(ol.entries) <= ownerRecordKeep {
		ol.entries = ol.entries[:0]
		ownerLocksPool.Put(ol)
	}
}

// deadlockLocked searches the wait-for graph from start's owner and reports whether it leads back to it,
// or the search reached more than m.maxSteps transactions. m.wmu must be held; key shards are locked one at a time.
func (m *LockManager) deadlockLocked(start *lockWaiter) bool {
	me := start.owner
	clear(m.visited)
	m.visited[me] = struct{}{}
	m.stack = append(m.stack[:0], me)
	steps := 0
	for len(m.stack) > 0 {
		o := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		w := m.waits[o]
		if w == nil {
			continue
		}
		m.scratch = w.blockers(m.scratch[:0])
		for _, b := range m.scratch {
			if b == me {
				return true
			}
			if _, seen := m.visited[b]; !seen {
				steps++
				if steps > m.maxSteps {
					return true
				}
				m.visited[b] = struct{}{}
				m.stack = append(m.stack, b)
			}
		}
	}
	return false
}

// blockers appends to dst the owners w waits for: holders of its key in an incompatible mode and
// requests queued ahead of it in an incompatible mode. A granted or abandoned w waits for nobody.
// (n requests queued on one hot row make n²/2 edges; the search bound counts transactions, not edges,
// so a long queue alone is never reported as a deadlock.)
func (w *lockWaiter) blockers(dst []uint64) []uint64 {
	e := w.entry
	e.shard.mu.Lock()
	defer e.shard.mu.Unlock()
	if !w.queued {
		return dst
	}
	for _, h := range e.holders {
		if h.owner != w.owner && !compatible(h.mode, w.mode) {
			dst = append(dst, h.owner)
		}
	}
	for _, v := range e.waiters {
		if v == w {
			break
		}
		if !compatible(v.mode, w.mode) {
			dst = append(dst, v.owner)
		}
	}
	return dst
}

// CurrentWaits is the number of lock requests blocked now (LockStats.CurrentWaits, without the rest).
func (m *LockManager) CurrentWaits() int64 { return m.currentWaits.Load() }

// Stats returns the counters for SHOW STATUS.
func (m *LockManager) Stats() LockStats {
	var held int64
	for i := range m.shards {
		held += m.shards[i].held.Load()
	}
	return LockStats{
		Locks:        held,
		CurrentWaits: m.currentWaits.Load(),
		Waits:        m.nWaits.Load(),
		Deadlocks:    m.nDeadlocks.Load(),
		Timeouts:     m.nTimeouts.Load(),
		WaitTime:     time.Duration(m.waitNanos.Load()),
	}
}

// WaitingFor returns, for diagnostics (SHOW ENGINE/PROCESSLIST), a copy of the key owner is blocked on,
// or nil if it is not blocked.
func (m *LockManager) WaitingFor(owner uint64) []byte {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if w := m.waits[owner]; w != nil {
		return []byte(w.entry.key)
	}
	return nil
}
