package txn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

const (
	ltS = LockShared
	ltX = LockExclusive
)

const ltLong = 10 * time.Second // a wait that a passing test never runs out

func ltDetectOn() *LockManager { return NewLockManager(DefaultLockConfig()) }

func ltKey(s string) []byte { return []byte(s) }

// lockAsync starts owner's request in a goroutine; the result arrives on the returned channel.
func ltAsync(m *LockManager, owner uint64, key string, mode LockMode, wait time.Duration) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- m.Lock(context.Background(), owner, ltKey(key), mode, wait) }()
	return ch
}

// lockQueued starts owner's request and returns once it is blocked in its queue.
func ltQueued(t *testing.T, m *LockManager, owner uint64, key string, mode LockMode, wait time.Duration) <-chan error {
	t.Helper()
	ch := ltAsync(m, owner, key, mode, wait)
	ltWaitBlocked(t, m, owner, ch)
	return ch
}

// waitBlocked waits until owner is registered as waiting (it is then in its queue).
func ltWaitBlocked(t *testing.T, m *LockManager, owner uint64, ch <-chan error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for m.WaitingFor(owner) == nil {
		select {
		case err := <-ch:
			t.Fatalf("owner %d: expected to block, Lock returned %v", owner, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("owner %d never blocked", owner)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func ltRecv(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("lock request did not finish")
		return nil
	}
}

func ltMustGrant(t *testing.T, ch <-chan error) {
	t.Helper()
	if err := ltRecv(t, ch); err != nil {
		t.Fatalf("expected grant, got %v", err)
	}
}

func ltMustLock(t *testing.T, m *LockManager, owner uint64, key string, mode LockMode) {
	t.Helper()
	if err := m.Lock(context.Background(), owner, ltKey(key), mode, 0); err != nil {
		t.Fatalf("owner %d %v %q: %v", owner, mode, key, err)
	}
}

// stillBlocked checks that the request has not finished.
func ltStillBlocked(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("expected request to still block, got %v", err)
	case <-time.After(20 * time.Millisecond):
	}
}

func ltCode(err error) uint16 {
	var e *sqlerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func ltWantCode(t *testing.T, err error, code uint16, state string) {
	t.Helper()
	var e *sqlerr.Error
	if !errors.As(err, &e) {
		t.Fatalf("want error %d, got %v", code, err)
	}
	if e.Code != code || e.State != state {
		t.Fatalf("want %d (%s), got %d (%s): %s", code, state, e.Code, e.State, e.Message)
	}
}

// holders returns key's holders and queued owners, read under the shard mutex.
func ltHolders(m *LockManager, key string) (map[uint64]LockMode, []uint64) {
	sh := m.shardFor(ltKey(key))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[key]
	if e == nil {
		return nil, nil
	}
	hs := make(map[uint64]LockMode)
	for _, h := range e.holders {
		hs[h.owner] = h.mode
	}
	var ws []uint64
	for _, w := range e.waiters {
		ws = append(ws, w.owner)
	}
	return hs, ws
}

func ltWantHolders(t *testing.T, m *LockManager, key string, want map[uint64]LockMode) {
	t.Helper()
	got, _ := ltHolders(m, key)
	if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("holders of %q = %v, want %v", key, got, want)
	}
}

// checkEmpty asserts that nothing is held, queued, registered or recorded.
func ltCheckEmpty(t *testing.T, m *LockManager) {
	t.Helper()
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n, held := len(sh.m), sh.held.Load()
		sh.mu.Unlock()
		if n != 0 || held != 0 {
			t.Fatalf("shard %d: %d entries, %d held after release", i, n, held)
		}
	}
	for i := range m.owners {
		os := &m.owners[i]
		os.mu.Lock()
		n := len(os.m)
		os.mu.Unlock()
		if n != 0 {
			t.Fatalf("owner shard %d: %d owner records after release", i, n)
		}
	}
	m.wmu.Lock()
	n := len(m.waits)
	m.wmu.Unlock()
	if n != 0 {
		t.Fatalf("%d owners still registered as waiting", n)
	}
	if st := m.Stats(); st.Locks != 0 || st.CurrentWaits != 0 {
		t.Fatalf("stats after release: %+v", st)
	}
}

func TestLockCompatibility(t *testing.T) {
	for _, tc := range []struct {
		held, req LockMode
		ok        bool
	}{
		{ltS, ltS, true},
		{ltS, ltX, false},
		{ltX, ltS, false},
		{ltX, ltX, false},
	} {
		t.Run(fmt.Sprintf("%v/%v", tc.held, tc.req), func(t *testing.T) {
			m := ltDetectOn()
			ltMustLock(t, m, 1, "r", tc.held)
			err := m.Lock(context.Background(), 2, ltKey("r"), tc.req, 0)
			if tc.ok {
				if err != nil {
					t.Fatalf("want grant, got %v", err)
				}
			} else {
				ltWantCode(t, err, sqlerr.ErrLockWaitTimeout, "HY000")
				// A blocked request is granted once the holder releases.
				ch := ltQueued(t, m, 2, "r", tc.req, ltLong)
				ltStillBlocked(t, ch)
				m.ReleaseAll(1)
				ltMustGrant(t, ch)
				ltWantHolders(t, m, "r", map[uint64]LockMode{2: tc.req})
			}
			// Other keys are unaffected.
			ltMustLock(t, m, 3, "other", ltX)
			m.ReleaseAll(1)
			m.ReleaseAll(2)
			m.ReleaseAll(3)
			ltCheckEmpty(t, m)
		})
	}
}

func TestLockReentry(t *testing.T) {
	for _, tc := range []struct{ held, req, want LockMode }{
		{ltS, ltS, ltS},
		{ltX, ltS, ltX},
		{ltX, ltX, ltX},
	} {
		t.Run(fmt.Sprintf("%v/%v", tc.held, tc.req), func(t *testing.T) {
			m := ltDetectOn()
			ltMustLock(t, m, 1, "r", tc.held)
			// Queue a conflicting waiter: re-entry must not wait behind it.
			ch := ltQueued(t, m, 2, "r", ltX, ltLong)
			for range 3 {
				ltMustLock(t, m, 1, "r", tc.req)
			}
			ltWantHolders(t, m, "r", map[uint64]LockMode{1: tc.want})
			if st := m.Stats(); st.Locks != 1 {
				t.Fatalf("Locks = %d, want 1", st.Locks)
			}
			m.ReleaseAll(1)
			ltMustGrant(t, ch)
			m.ReleaseAll(2)
			ltCheckEmpty(t, m)
		})
	}
}

func TestLockUpgradeSoleHolder(t *testing.T) {
	m := ltDetectOn()
	ltMustLock(t, m, 1, "r", ltS)
	ch := ltQueued(t, m, 2, "r", ltX, ltLong) // queued X waiter does not block the sole holder's upgrade
	ltMustLock(t, m, 1, "r", ltX)
	ltWantHolders(t, m, "r", map[uint64]LockMode{1: ltX})
	// Now S from a third owner blocks too, behind owner 2.
	ch3 := ltQueued(t, m, 3, "r", ltS, ltLong)
	m.ReleaseAll(1)
	ltMustGrant(t, ch)
	ltStillBlocked(t, ch3)
	m.ReleaseAll(2)
	ltMustGrant(t, ch3)
	m.ReleaseAll(3)
	ltCheckEmpty(t, m)
}

func TestLockUpgradeWaitsAheadOfQueue(t *testing.T) {
	m := ltDetectOn()
	ltMustLock(t, m, 1, "r", ltS)
	ltMustLock(t, m, 2, "r", ltS)
	if err := m.Lock(context.Background(), 1, ltKey("r"), ltX, 0); ltCode(err) != sqlerr.ErrLockWaitTimeout {
		t.Fatalf("upgrade with another S holder and wait=0: %v", err)
	}
	ltWantHolders(t, m, "r", map[uint64]LockMode{1: ltS, 2: ltS}) // the failed upgrade keeps S
	x3 := ltQueued(t, m, 3, "r", ltX, ltLong)
	up := ltQueued(t, m, 1, "r", ltX, ltLong)
	if _, ws := ltHolders(m, "r"); fmt.Sprint(ws) != "[1 3]" {
		t.Fatalf("queue = %v, want upgrader first [1 3]", ws)
	}
	m.ReleaseAll(2)
	ltMustGrant(t, up)
	ltWantHolders(t, m, "r", map[uint64]LockMode{1: ltX})
	ltStillBlocked(t, x3)
	m.ReleaseAll(1)
	ltMustGrant(t, x3)
	m.ReleaseAll(3)
	ltCheckEmpty(t, m)
}

func TestLockUpgradeDeadlock(t *testing.T) {
	m := ltDetectOn()
	ltMustLock(t, m, 1, "r", ltS)
	ltMustLock(t, m, 2, "r", ltS)
	up1 := ltQueued(t, m, 1, "r", ltX, ltLong)
	err := m.Lock(context.Background(), 2, ltKey("r"), ltX, ltLong)
	ltWantCode(t, err, sqlerr.ErrLockDeadlock, "40001")
	ltStillBlocked(t, up1)
	m.ReleaseAll(2) // the victim rolls back
	ltMustGrant(t, up1)
	ltWantHolders(t, m, "r", map[uint64]LockMode{1: ltX})
	m.ReleaseAll(1)
	ltCheckEmpty(t, m)
	if st := m.Stats(); st.Deadlocks != 1 {
		t.Fatalf("Deadlocks = %d, want 1", st.Deadlocks)
	}
}

// TestLockFIFO queues requests behind an exclusive holder and checks they are granted in batches in
// queue order: consecutive shared requests together, each exclusive alone, nothing overtaking.
func TestLockFIFO(t *testing.T) {
	for _, modes := range []string{"XXXX", "SSXS", "SXSSX", "XSSSX", "SSSS", "XSXSXS"} {
		t.Run(modes, func(t *testing.T) {
			m := ltDetectOn()
			ltMustLock(t, m, 1, "r", ltX)
			var mu sync.Mutex
			var order []uint64
			chans := map[uint64]<-chan error{}
			for i, c := range modes {
				owner := uint64(i + 2)
				mode := ltS
				if c == 'X' {
					mode = ltX
				}
				ch := make(chan error, 1)
				go func() {
					err := m.Lock(context.Background(), owner, ltKey("r"), mode, ltLong)
					if err == nil {
						mu.Lock()
						order = append(order, owner)
						mu.Unlock()
					}
					ch <- err
				}()
				ltWaitBlocked(t, m, owner, ch)
				chans[owner] = ch
			}
			// Expected batches.
			var batches [][]uint64
			for i, c := range modes {
				owner := uint64(i + 2)
				if c == 'S' && i > 0 && modes[i-1] == 'S' {
					batches[len(batches)-1] = append(batches[len(batches)-1], owner)
				} else {
					batches = append(batches, []uint64{owner})
				}
			}
			m.ReleaseAll(1)
			var want []uint64
			for _, b := range batches {
				hs := map[uint64]LockMode{}
				for _, o := range b {
					hs[o] = ltS
					if len(b) == 1 && modes[o-2] == 'X' {
						hs[o] = ltX
					}
				}
				ltWantHolders(t, m, "r", hs)
				for _, o := range b {
					ltMustGrant(t, chans[o])
				}
				mu.Lock()
				got := append([]uint64(nil), order...)
				mu.Unlock()
				// Within a batch grants are simultaneous: compare each batch as a set, batches in order.
				if len(got) == len(want)+len(b) {
					seg := got[len(want):]
					sort.Slice(seg, func(i, j int) bool { return seg[i] < seg[j] })
				}
				want = append(want, b...)
				if fmt.Sprint(got[len(got)-len(b):]) != fmt.Sprint(b) || len(got) != len(want) {
					t.Fatalf("grant order %v, want batches %v", order, batches)
				}
				for _, o := range b {
					m.ReleaseAll(o)
				}
			}
			ltCheckEmpty(t, m)
		})
	}
}

func TestLockNoWriterStarvation(t *testing.T) {
	m := ltDetectOn()
	ltMustLock(t, m, 1, "r", ltS)
	x2 := ltQueued(t, m, 2, "r", ltX, ltLong)
	// A new S request is compatible with the holder but must not overtake the queued X.
	if err := m.Lock(context.Background(), 3, ltKey("r"), ltS, 0); ltCode(err) != sqlerr.ErrLockWaitTimeout {
		t.Fatalf("S behind queued X with wait=0: %v", err)
	}
	s3 := ltQueued(t, m, 3, "r", ltS, ltLong)
	s4 := ltQueued(t, m, 4, "r", ltS, ltLong)
	// A stream of readers cannot keep the writer out: more S requests keep queueing.
	ltMustLock(t, m, 1, "r", ltS) // re-entry of the existing reader is still fine
	m.ReleaseAll(1)
	ltMustGrant(t, x2)
	ltWantHolders(t, m, "r", map[uint64]LockMode{2: ltX})
	ltStillBlocked(t, s3)
	m.ReleaseAll(2)
	ltMustGrant(t, s3)
	ltMustGrant(t, s4)
	ltWantHolders(t, m, "r", map[uint64]LockMode{3: ltS, 4: ltS})
	m.ReleaseAll(3)
	m.ReleaseAll(4)
	ltCheckEmpty(t, m)
}

func TestLockTimeout(t *testing.T) {
	m := ltDetectOn()
	ltMustLock(t, m, 1, "r", ltX)

	start := time.Now()
	err := m.Lock(context.Background(), 2, ltKey("r"), ltS, 0)
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("wait=0 took %v", d)
	}
	ltWantCode(t, err, sqlerr.ErrLockWaitTimeout, "HY000")

	const wait = 50 * time.Millisecond
	start = time.Now()
	err = m.Lock(context.Background(), 2, ltKey("r"), ltX, wait)
	if d := time.Since(start); d < wait {
		t.Fatalf("timed out after %v, before %v", d, wait)
	}
	ltWantCode(t, err, sqlerr.ErrLockWaitTimeout, "HY000")
	if m.WaitingFor(2) != nil {
		t.Fatal("timed-out owner still waiting")
	}
	if _, ws := ltHolders(m, "r"); len(ws) != 0 {
		t.Fatalf("timed-out request still queued: %v", ws)
	}
	st := m.Stats()
	if st.Timeouts != 2 || st.Waits != 1 || st.CurrentWaits != 0 || st.Locks != 1 || st.WaitTime < wait {
		t.Fatalf("stats %+v", st)
	}
	m.ReleaseAll(1)
	m.ReleaseAll(2)
	ltCheckEmpty(t, m)
}

// TestLockGiveUpWakesFollowers: a queued X that gives up must unblock the S requests queued behind it.
func TestLockGiveUpWakesFollowers(t *testing.T) {
	for _, how := range []string{"timeout", "cancel", "deadline"} {
		t.Run(how, func(t *testing.T) {
			m := ltDetectOn()
			ltMustLock(t, m, 1, "r", ltS)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wait := ltLong
			switch how {
			case "timeout":
				wait = 100 * time.Millisecond
			case "deadline":
				ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
			}
			x2 := make(chan error, 1)
			go func() { x2 <- m.Lock(ctx, 2, ltKey("r"), ltX, wait) }()
			ltWaitBlocked(t, m, 2, x2)
			s3 := ltQueued(t, m, 3, "r", ltS, ltLong)
			if how == "cancel" {
				cancel()
			}
			err := ltRecv(t, x2)
			switch how {
			case "timeout":
				ltWantCode(t, err, sqlerr.ErrLockWaitTimeout, "HY000")
			case "cancel":
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("want context.Canceled, got %v", err)
				}
			case "deadline":
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("want context.DeadlineExceeded, got %v", err)
				}
			}
			ltMustGrant(t, s3) // owner 1 still holds S
			ltWantHolders(t, m, "r", map[uint64]LockMode{1: ltS, 3: ltS})
			if m.WaitingFor(2) != nil {
				t.Fatal("owner 2 still waiting")
			}
			m.ReleaseAll(1)
			m.ReleaseAll(2)
			m.ReleaseAll(3)
			ltCheckEmpty(t, m)
		})
	}
}

func TestLockContextDoneButFree(t *testing.T) {
	m := ltDetectOn()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Lock(ctx, 1, ltKey("r"), ltX, ltLong); err != nil {
		t.Fatalf("free lock with done ctx: %v", err) // ctx is consulted only while waiting
	}
	if err := m.Lock(ctx, 2, ltKey("r"), ltX, ltLong); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	m.ReleaseAll(1)
	ltCheckEmpty(t, m)
}

// TestLockDeadlockCycle builds a cycle owner i holds key i, waits for key i+1, in order, so the last
// request closes the cycle: it alone gets 1213, and after its ReleaseAll the others proceed.
func TestLockDeadlockCycle(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := ltDetectOn()
			key := func(i int) string { return fmt.Sprint("k", i%n) }
			for i := range n {
				mode := ltX
				if i%2 == 1 {
					mode = ltS // S held, X requested: still a conflict
				}
				ltMustLock(t, m, uint64(i), key(i), mode)
			}
			chans := make([]<-chan error, n-1)
			for i := range n - 1 {
				chans[i] = ltQueued(t, m, uint64(i), key(i+1), ltX, ltLong)
			}
			err := m.Lock(context.Background(), uint64(n-1), ltKey(key(n)), ltX, ltLong)
			ltWantCode(t, err, sqlerr.ErrLockDeadlock, "40001")
			for _, ch := range chans {
				ltStillBlocked(t, ch)
			}
			m.ReleaseAll(uint64(n - 1))
			for i := n - 2; i >= 0; i-- {
				ltMustGrant(t, chans[i])
				m.ReleaseAll(uint64(i))
			}
			ltCheckEmpty(t, m)
			if st := m.Stats(); st.Deadlocks != 1 || st.Waits != uint64(n-1) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestLockDeadlockConcurrent closes cycles with racing requests: exactly one victim per cycle.
func TestLockDeadlockConcurrent(t *testing.T) {
	for _, n := range []int{2, 3, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			for round := range 20 {
				m := ltDetectOn()
				var ready, start sync.WaitGroup
				ready.Add(n)
				start.Add(1)
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						owner := uint64(i + 1)
						if err := m.Lock(context.Background(), owner, ltKey(fmt.Sprint("k", i)), ltX, 0); err != nil {
							t.Errorf("owner %d: %v", owner, err)
						}
						ready.Done()
						start.Wait()
						errs[i] = m.Lock(context.Background(), owner, ltKey(fmt.Sprint("k", (i+1)%n)), ltX, ltLong)
						m.ReleaseAll(owner)
					})
				}
				ready.Wait()
				start.Done()
				wg.Wait()
				victims := 0
				for _, err := range errs {
					switch {
					case err == nil:
					case ltCode(err) == sqlerr.ErrLockDeadlock:
						victims++
					default:
						t.Fatalf("round %d: unexpected error %v", round, err)
					}
				}
				if victims != 1 {
					t.Fatalf("round %d: %d victims (%v), want 1", round, victims, errs)
				}
				ltCheckEmpty(t, m)
			}
		})
	}
}

func TestLockDeadlockDetectOff(t *testing.T) {
	m := ltDetectOn()
	m.SetDeadlockDetect(false)
	ltMustLock(t, m, 1, "a", ltX)
	ltMustLock(t, m, 2, "b", ltX)
	w1 := ltQueued(t, m, 1, "b", ltX, ltLong)
	start := time.Now()
	err := m.Lock(context.Background(), 2, ltKey("a"), ltX, 100*time.Millisecond)
	ltWantCode(t, err, sqlerr.ErrLockWaitTimeout, "HY000") // only the timeout resolves it
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("timed out early")
	}
	ltStillBlocked(t, w1)
	m.ReleaseAll(2)
	ltMustGrant(t, w1)
	m.ReleaseAll(1)
	ltCheckEmpty(t, m)
	if st := m.Stats(); st.Deadlocks != 0 || st.Timeouts != 1 {
		t.Fatalf("stats %+v", st)
	}

	// Switched back on at runtime, the same cycle is detected; waiters registered while it was off count.
	ltMustLock(t, m, 1, "a", ltX)
	ltMustLock(t, m, 2, "b", ltX)
	w1 = ltQueued(t, m, 1, "b", ltX, ltLong)
	m.SetDeadlockDetect(true)
	ltWantCode(t, m.Lock(context.Background(), 2, ltKey("a"), ltX, ltLong), sqlerr.ErrLockDeadlock, "40001")
	m.ReleaseAll(2)
	ltMustGrant(t, w1)
	m.ReleaseAll(1)
	ltCheckEmpty(t, m)
}

// TestLockDetectBound builds an acyclic chain 4 -> 3 -> 2 -> 1 of waits: with a search bound of 2 edges
// the last request is refused with 1213, with the default bound it waits.
func TestLockDetectBound(t *testing.T) {
	for _, tc := range []struct {
		steps    int
		deadlock bool
	}{{2, true}, {3, false}, {0, false}} {
		t.Run(fmt.Sprint(tc.steps), func(t *testing.T) {
			m := NewLockManager(LockConfig{DeadlockDetect: true, MaxDetectSteps: tc.steps})
			ltMustLock(t, m, 1, "k1", ltX)
			ltMustLock(t, m, 2, "k2", ltX)
			ltMustLock(t, m, 3, "k3", ltX)
			w2 := ltQueued(t, m, 2, "k1", ltX, ltLong)
			w3 := ltQueued(t, m, 3, "k2", ltX, ltLong)
			w4 := ltAsync(m, 4, "k3", ltX, ltLong)
			if tc.deadlock {
				ltWantCode(t, ltRecv(t, w4), sqlerr.ErrLockDeadlock, "40001")
			} else {
				ltWaitBlocked(t, m, 4, w4)
			}
			m.ReleaseAll(1)
			ltMustGrant(t, w2)
			m.ReleaseAll(2)
			ltMustGrant(t, w3)
			m.ReleaseAll(3)
			if !tc.deadlock {
				ltMustGrant(t, w4)
			}
			m.ReleaseAll(4)
			ltCheckEmpty(t, m)
		})
	}
}

func TestLockReleaseAllWakesWaiters(t *testing.T) {
	m := ltDetectOn()
	for _, key := range []string{"a", "b", "c"} {
		ltMustLock(t, m, 1, key, ltX)
	}
	var chans []<-chan error
	chans = append(chans, ltQueued(t, m, 2, "a", ltX, ltLong))
	chans = append(chans, ltQueued(t, m, 3, "b", ltS, ltLong))
	chans = append(chans, ltQueued(t, m, 4, "b", ltS, ltLong))
	chans = append(chans, ltQueued(t, m, 5, "c", ltS, -1))
	if got := string(m.WaitingFor(5)); got != "c" {
		t.Fatalf("WaitingFor(5) = %q", got)
	}
	if m.WaitingFor(1) != nil {
		t.Fatal("holder reported waiting")
	}
	if st := m.Stats(); st.Locks != 3 || st.CurrentWaits != 4 || st.Waits != 4 {
		t.Fatalf("stats %+v", st)
	}
	m.ReleaseAll(1)
	for _, ch := range chans {
		ltMustGrant(t, ch)
	}
	if st := m.Stats(); st.Locks != 4 || st.CurrentWaits != 0 {
		t.Fatalf("stats %+v", st)
	}
	for o := uint64(1); o <= 5; o++ {
		m.ReleaseAll(o)
	}
	m.ReleaseAll(99) // unknown owner: no-op
	ltCheckEmpty(t, m)
}

func TestLockInvalidMode(t *testing.T) {
	m := ltDetectOn()
	if err := m.Lock(context.Background(), 1, ltKey("r"), 0, 0); err == nil {
		t.Fatal("mode 0 accepted")
	}
	ltCheckEmpty(t, m)
}

func TestLockNoLeak(t *testing.T) {
	m := ltDetectOn()
	for owner := uint64(1); owner <= 50; owner++ {
		for i := range 100 {
			mode := ltS
			if i%3 == 0 {
				mode = ltX
			}
			// Overlapping S keys between owners, distinct X keys; also a key that "does not exist".
			key := fmt.Sprintf("row/%d", i)
			if mode == ltX {
				key = fmt.Sprintf("row/%d/%d", owner, i)
			}
			ltMustLock(t, m, owner, key, mode)
		}
		ltMustLock(t, m, owner, "", ltS) // the empty key is a key too
		if owner%2 == 1 {
			m.ReleaseAll(owner)
			m.ReleaseAll(owner - 1)
		}
	}
	m.ReleaseAll(50)
	ltCheckEmpty(t, m)
}

// TestLockStress runs many transactions over few keys with random modes, re-entry and upgrades, and
// checks mutual exclusion with per-key counters of holders that are only changed while holding.
func TestLockStress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		detect  bool
		maxWait time.Duration // random wait in [0, maxWait]; -1 = no limit
	}{
		{"detect/nolimit", true, -1},
		{"detect/timeouts", true, 5 * time.Millisecond},
		{"nodetect/timeouts", false, 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewLockManager(LockConfig{DeadlockDetect: tc.detect})
			const (
				nKeys    = 8
				nWorkers = 16
			)
			iters := 400
			if testing.Short() {
				iters = 100
			}
			var readers, writers [nKeys]atomic.Int32
			var violations, ok, deadlocks, timeouts, canceled atomic.Int64
			check := func(key int, mode LockMode) {
				r, w := readers[key].Load(), writers[key].Load()
				if (mode == ltX && (w != 1 || r != 0)) || (mode == ltS && w != 0) {
					violations.Add(1)
				}
			}
			var wg sync.WaitGroup
			for wk := range nWorkers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(wk), 7))
					for it := range iters {
						owner := uint64(wk*iters + it + 1)
						held := map[int]LockMode{}
						failed := false
						for range 1 + rng.IntN(4) {
							key := rng.IntN(nKeys)
							mode := ltS
							if rng.IntN(2) == 0 {
								mode = ltX
							}
							wait := time.Duration(-1)
							if tc.maxWait >= 0 {
								wait = time.Duration(rng.Int64N(int64(tc.maxWait) + 1))
							}
							ctx, cancel := context.Background(), context.CancelFunc(func() {})
							if tc.maxWait >= 0 && rng.IntN(20) == 0 {
								ctx, cancel = context.WithTimeout(ctx, time.Millisecond)
							}
							err := m.Lock(ctx, owner, []byte{'k', byte(key)}, mode, wait)
							cancel()
							if err != nil {
								switch {
								case ltCode(err) == sqlerr.ErrLockDeadlock:
									deadlocks.Add(1)
								case ltCode(err) == sqlerr.ErrLockWaitTimeout:
									timeouts.Add(1)
								case errors.Is(err, context.DeadlineExceeded):
									canceled.Add(1)
								default:
									t.Errorf("unexpected error %v", err)
								}
								failed = true
								break
							}
							prev, had := held[key]
							switch {
							case !had:
								if mode == ltX {
									writers[key].Add(1)
								} else {
									readers[key].Add(1)
								}
								held[key] = mode
							case prev == ltS && mode == ltX:
								readers[key].Add(-1)
								writers[key].Add(1)
								held[key] = ltX
							}
							check(key, held[key])
							if rng.IntN(4) == 0 {
								runtime.Gosched()
							}
						}
						if !failed {
							ok.Add(1)
						}
						for key, mode := range held {
							check(key, mode)
							if mode == ltX {
								writers[key].Add(-1)
							} else {
								readers[key].Add(-1)
							}
						}
						m.ReleaseAll(owner)
					}
				})
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				buf := make([]byte, 1<<20)
				t.Fatalf("stress did not terminate (missed deadlock?)\n%s", buf[:runtime.Stack(buf, true)])
			}
			if v := violations.Load(); v != 0 {
				t.Fatalf("%d mutual exclusion violations", v)
			}
			st := m.Stats()
			t.Logf("txns ok=%d deadlocks=%d timeouts=%d ctx=%d; stats %+v",
				ok.Load(), deadlocks.Load(), timeouts.Load(), canceled.Load(), st)
			if uint64(deadlocks.Load()) != st.Deadlocks || uint64(timeouts.Load()) != st.Timeouts {
				t.Fatalf("stats disagree with outcomes: %+v", st)
			}
			if !tc.detect && st.Deadlocks != 0 {
				t.Fatalf("deadlocks reported with detection off")
			}
			if ok.Load() == 0 {
				t.Fatal("no transaction succeeded")
			}
			ltCheckEmpty(t, m)
		})
	}
}

// A long queue on one hot row is not a deadlock: 120 exclusive waiters behind one holder (7,000+
// wait-for edges, more than the search bound counts) all get the lock in turn.
func TestLongQueueIsNotDeadlock(t *testing.T) {
	m := NewLockManager(DefaultLockConfig())
	ctx := context.Background()
	if err := m.Lock(ctx, 1, []byte("hot"), LockExclusive, time.Second); err != nil {
		t.Fatal(err)
	}
	const n = 120
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(owner uint64) {
			err := m.Lock(ctx, owner, []byte("hot"), LockExclusive, 30*time.Second)
			if err == nil {
				m.ReleaseAll(owner)
			}
			errs <- err
		}(uint64(100 + i))
	}
	deadline := time.Now().Add(10 * time.Second)
	for m.Stats().CurrentWaits < n {
		select {
		case err := <-errs:
			t.Fatalf("waiter failed before the holder released: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d waiters queued", m.Stats().CurrentWaits, n)
		}
		time.Sleep(time.Millisecond)
	}
	m.ReleaseAll(1)
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("waiter failed: %v", err)
		}
	}
}
