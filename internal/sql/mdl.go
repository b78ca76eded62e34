package sql

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// mdLock is a database's metadata lock: shared by the statements and transactions that use the
// database's tables, exclusive for DDL. Unlike a sync.RWMutex, a wait for it ends with the statement
// (KILL, max_execution_time, the client gone) or after lock_wait_timeout (1205), as MySQL's
// metadata lock waits do: a DDL behind an idle transaction can be killed. As with sync.RWMutex, a
// waiting DDL keeps new sharers out, so it is not starved.
type mdLock struct {
	mu      sync.Mutex
	readers int
	writer  bool
	pending int           // DDL statements waiting for the lock
	changed chan struct{} // closed when the lock is released or a waiter gives up
}

func (m *mdLock) waitLocked(ctx context.Context, deadline **time.Timer, timeout time.Duration) error {
	if m.changed == nil {
		m.changed = make(chan struct{})
	}
	ch := m.changed
	if *deadline == nil {
		*deadline = time.NewTimer(timeout)
	}
	m.mu.Unlock()
	defer m.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return sqlerr.New(sqlerr.ErrQueryInterrupted, "Query execution was interrupted")
	case <-(*deadline).C:
		return sqlerr.New(sqlerr.ErrLockWaitTimeout, "Lock wait timeout exceeded; try restarting transaction")
	}
}

func (m *mdLock) wakeLocked() {
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
}

// rlock takes the lock shared.
func (m *mdLock) rlock(ctx context.Context, timeout time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var deadline *time.Timer
	defer func() {
		if deadline != nil {
			deadline.Stop()
		}
	}()
	for m.writer || m.pending > 0 {
		if err := m.waitLocked(ctx, &deadline, timeout); err != nil {
			return err
		}
	}
	m.readers++
	return nil
}

func (m *mdLock) runlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.readers--
	if m.readers == 0 {
		m.wakeLocked()
	}
}

// lock takes the lock exclusively.
func (m *mdLock) lock(ctx context.Context, timeout time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var deadline *time.Timer
	defer func() {
		if deadline != nil {
			deadline.Stop()
		}
	}()
	m.pending++
	for m.writer || m.readers > 0 {
		if err := m.waitLocked(ctx, &deadline, timeout); err != nil {
			m.pending--
			m.wakeLocked() // sharers held back by this waiter go on
			return err
		}
	}
	m.pending--
	m.writer = true
	return nil
}

func (m *mdLock) unlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writer = false
	m.wakeLocked()
}

// mdlFor returns a database's metadata lock.
func (db *DB) mdlFor(name string) *mdLock {
	name = strings.ToLower(name)
	db.mdlMu.Lock()
	defer db.mdlMu.Unlock()
	if db.mdls == nil {
		db.mdls = map[string]*mdLock{}
	}
	m, ok := db.mdls[name]
	if !ok {
		m = &mdLock{}
		db.mdls[name] = m
	}
	return m
}
