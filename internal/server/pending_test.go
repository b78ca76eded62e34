package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/txn"
)

// The commit loop holds a group open for the commands that may still commit: commands in progress,
// less commits already handed over and statements blocked on a row lock; without early lock release
// a blocked statement means no wait at all (its lock's holder may be in the group being held).
func TestPendingCommits(t *testing.T) {
	for _, early := range []bool{true, false} {
		t.Run(map[bool]string{true: "early lock release", false: "locks held until applied"}[early], func(t *testing.T) {
			testPendingCommits(t, early)
		})
	}
}

func testPendingCommits(t *testing.T, early bool) {
	st := repltest.Start(t, nil, txn.NewApplier(nil), nil)
	locks := txn.NewLockManager(txn.DefaultLockConfig())
	m := txn.NewManager(st.Engine, locks, st.Node)
	m.SetEarlyRelease(early)
	var ref atomic.Pointer[txn.Manager]
	running := new(atomic.Int64)
	pending := pendingCommits(running, &ref)
	running.Store(3)
	if got := pending(); got != 0 {
		t.Fatalf("pending = %d before the transaction manager exists, want 0", got)
	}
	ref.Store(m)
	if got := pending(); got != 3 {
		t.Fatalf("pending = %d with 3 commands in progress, want 3", got)
	}
	ctx := context.Background()
	key := []byte("row")
	holder := m.Begin(txn.RepeatableRead, false)
	if err := holder.Lock(ctx, key, txn.LockExclusive, time.Second); err != nil {
		t.Fatal(err)
	}
	waiter := m.Begin(txn.RepeatableRead, false)
	granted := make(chan error, 1)
	go func() { granted <- waiter.Lock(ctx, key, txn.LockExclusive, 10*time.Second) }()
	for deadline := time.Now().Add(5 * time.Second); locks.CurrentWaits() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second lock request never blocked")
		}
	}
	want := int64(2)
	if !early {
		want = 0
	}
	if got := pending(); got != want {
		t.Fatalf("pending = %d with 3 commands in progress, one blocked on a row lock, want %d", got, want)
	}
	holder.Rollback()
	if err := <-granted; err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 3 {
		t.Fatalf("pending = %d once the blocked statement got its lock, want 3", got)
	}
	waiter.Rollback()
}
