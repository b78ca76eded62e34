package repl

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

// startManualSingle starts a one-voter node in manual mode and drives it until it leads.
func startManualSingle(t *testing.T) *Node {
	t.Helper()
	fs := vfs.NewMem()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lg, err := klog.Open("/log", klog.Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: txn.NewApplier(nil), PurgeInterval: -1, Logger: quiet, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop(); eng.Close(); lg.Close() })
	for i := 0; i < 100 && n.Epoch() == 0; i++ {
		if err := n.ManualProcess(); err != nil {
			t.Fatal(err)
		}
		n.ManualTick()
	}
	if n.Epoch() == 0 {
		t.Fatal("single voter did not become leader")
	}
	return n
}

// putRecord is a txn record writing one key.
func putRecord(t *testing.T, k string) []byte {
	t.Helper()
	var rec []byte
	m := txn.NewManager(nil, txn.NewLockManager(txn.DefaultLockConfig()), captureCommit{&rec})
	tx := m.Begin(txn.RepeatableRead, false)
	tx.Set([]byte(k), []byte("v"))
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec
}

// captureCommit is a committer that only keeps the record.
type captureCommit struct{ rec *[]byte }

func (c captureCommit) Commit(_ context.Context, rec []byte, _ bool, _ uint64) (uint64, error) {
	*c.rec = append([]byte(nil), rec...)
	return 0, nil
}
func (captureCommit) Epoch() uint64 { return 1 }

// A record placed after records it read from (early lock release) is refused when one of them never
// reached the log, and proposed as usual when all of them did: no record enters the log after a
// write it was computed from that is not there.
func TestPlaceRefusesAfterRefusedDependency(t *testing.T) {
	n := startManualSingle(t)
	epoch := n.Epoch()
	ok := n.ManualPropose(putRecord(t, "a"), false, epoch)
	if ok.Err() != nil {
		t.Fatal(ok.Err())
	}
	frame := func(k string, ep uint64) *proposal {
		p, err := n.newProposal(frame(putRecord(t, k)), false, epoch)
		if err != nil {
			t.Fatal(err)
		}
		p.epoch = ep
		return p
	}
	// Refused on the loop: its epoch is not the current term (as after a leadership change).
	bad := frame("b", epoch+7)
	n.propose(bad)
	if !bad.refused || !errors.Is(bad.err, ErrStaleEpoch) {
		t.Fatalf("stale proposal: refused %v, err %v", bad.refused, bad.err)
	}
	dep := frame("c", epoch)
	dep.after = []*proposal{bad}
	n.propose(dep)
	if !dep.refused || !errors.Is(dep.err, ErrNotCommitted) {
		t.Fatalf("proposal after a refused one: refused %v, err %v; want ErrNotCommitted", dep.refused, dep.err)
	}
	good := frame("d", epoch)
	good.after = []*proposal{ok.p}
	n.propose(good)
	if good.refused {
		t.Fatalf("proposal after a proposed one refused: %v", good.err)
	}
	if err := n.ManualProcess(); err != nil {
		t.Fatal(err)
	}
	<-good.done
	if good.err != nil || ok.Err() != nil || good.index <= ok.Index() {
		t.Fatalf("good: index %d err %v; its dependency: index %d err %v", good.index, good.err, ok.Index(), ok.Err())
	}
	for _, k := range []string{"a", "d"} {
		if _, found, _ := n.cfg.Engine.Get([]byte(k)); !found {
			t.Errorf("%s not applied", k)
		}
	}
	for _, k := range []string{"b", "c"} {
		if _, found, _ := n.cfg.Engine.Get([]byte(k)); found {
			t.Errorf("%s applied although refused", k)
		}
	}
}

// The Node is a txn.Placer as it is: repl.Waiter and txn.Placed are one type.
var _ txn.Placer = (*Node)(nil)
