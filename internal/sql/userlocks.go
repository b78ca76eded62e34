package sql

import (
	"strings"
	"sync"
	"time"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// User-level locks: GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK and IS_USED_LOCK.
// A lock is held by a connection, may be taken several times by it (each RELEASE_LOCK undoes one
// GET_LOCK), and is released when the connection closes. Names compare case-insensitively and
// have at most 64 characters. Not done: MySQL's deadlock detection between waiting connections
// (error 3058); a wait ends at its timeout instead.

type userLockTable struct {
	mu    sync.Mutex
	locks map[string]*userLock // lower-case name
}

type userLock struct {
	owner uint32
	count int
	free  chan struct{} // closed when the lock is released
}

func userLockName(v types.Value) (string, error) {
	s := types.ToString(v)
	if v.IsNull() || s == "" || len([]rune(s)) > 64 {
		if v.IsNull() {
			s = "NULL"
		}
		return "", sqlerr.New(sqlerr.ErrUserLockWrongName, "Incorrect user-level lock name '%s'.", s)
	}
	return strings.ToLower(s), nil
}

// getLock waits up to timeout (forever if negative) for the lock: 1 when taken, 0 on timeout.
func (t *userLockTable) getLock(env *expr.Env, name string, conn uint32, timeout time.Duration) (types.Value, error) {
	var timer <-chan time.Time
	if timeout >= 0 {
		tm := time.NewTimer(timeout)
		defer tm.Stop()
		timer = tm.C
	}
	for {
		t.mu.Lock()
		if t.locks == nil {
			t.locks = map[string]*userLock{}
		}
		l := t.locks[name]
		if l == nil {
			// name may alias a row's reused buffer (exec's streaming reads): the key is a copy.
			t.locks[strings.Clone(name)] = &userLock{owner: conn, count: 1, free: make(chan struct{})}
			t.mu.Unlock()
			return types.NewInt(1), nil
		}
		if l.owner == conn {
			l.count++
			t.mu.Unlock()
			return types.NewInt(1), nil
		}
		wait := l.free
		t.mu.Unlock()
		select {
		case <-wait:
		case <-timer:
			return types.NewInt(0), nil
		case <-env.Ctx.Done():
			return types.Null, env.Interrupted()
		}
	}
}

// release undoes one GET_LOCK: 1, 0 when another connection holds the lock, NULL when nobody does.
func (t *userLockTable) release(name string, conn uint32) types.Value {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.locks[name]
	if l == nil {
		return types.Null
	}
	if l.owner != conn {
		return types.NewInt(0)
	}
	l.count--
	if l.count == 0 {
		delete(t.locks, name)
		close(l.free)
	}
	return types.NewInt(1)
}

// releaseAll frees every lock of conn and returns how many acquisitions that undid.
func (t *userLockTable) releaseAll(conn uint32) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := int64(0)
	for name, l := range t.locks {
		if l.owner == conn {
			n += int64(l.count)
			delete(t.locks, name)
			close(l.free)
		}
	}
	return n
}

func (t *userLockTable) holder(name string) (uint32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.locks[name]; l != nil {
		return l.owner, true
	}
	return 0, false
}

// User-level locks are functions of the registry whose state is the server's (the DB's lock table):
// the facade registers them.
func init() {
	for name, n := range map[string]int{"get_lock": 2, "release_lock": 1, "is_free_lock": 1, "is_used_lock": 1, "release_all_locks": 0} {
		expr.Register(expr.Builtin{Name: name, MinArgs: n, MaxArgs: n, Build: userLockFunc})
	}
}

// userLockFunc builds GET_LOCK, RELEASE_LOCK, IS_FREE_LOCK, IS_USED_LOCK and RELEASE_ALL_LOCKS.
func userLockFunc(c *expr.Call) (expr.Expr, error) {
	name, args := c.Name, c.Args
	t := expr.TInt
	if name == "is_used_lock" {
		t = expr.TUint
	}
	return &expr.Closure{Typed: expr.Typed{T: t}, Args: args, Fn: func(env *expr.Env, row []types.Value, a []expr.Expr) (types.Value, error) {
		locks := &sessionOf(env).db.userLocks
		conn := sessionOf(env).ConnID
		if name == "release_all_locks" {
			return types.NewInt(locks.releaseAll(conn)), nil
		}
		v, err := a[0].Eval(env, row)
		if err != nil {
			return types.Null, err
		}
		lock, err := userLockName(v)
		if err != nil {
			return types.Null, err
		}
		switch name {
		case "get_lock":
			tv, err := a[1].Eval(env, row)
			if err != nil {
				return types.Null, err
			}
			timeout := time.Duration(types.ToFloat(tv) * float64(time.Second))
			if tv.IsNull() {
				timeout = 0
			}
			return locks.getLock(env, lock, conn, timeout)
		case "release_lock":
			return locks.release(lock, conn), nil
		}
		owner, held := locks.holder(lock)
		if name == "is_free_lock" {
			return expr.BoolVal(!held), nil
		}
		if !held {
			return types.Null, nil
		}
		return types.NewUint(uint64(owner)), nil
	}}, nil
}
