package txn

import (
	"context"
	"fmt"
	"testing"

	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/repl/repltest"
)

// framedCommitter is the server's committer reduced to the framing: records come with repl's
// header room before them and go to the node without a copy. framedNode also places them.
type framedCommitter struct{ n *repl.Node }

func (f framedCommitter) Epoch() uint64       { return f.n.Epoch() }
func (f framedCommitter) RecordHeadroom() int { return repl.RecordHeadroom }
func (f framedCommitter) Commit(ctx context.Context, rec []byte, async bool, epoch uint64) (uint64, error) {
	return f.n.CommitFramed(ctx, rec, async, epoch)
}

type framedNode struct{ framedCommitter }

func (f framedNode) Place(ctx context.Context, rec []byte, async bool, epoch uint64, after []Placed) (Placed, error) {
	return f.n.PlaceFramed(ctx, rec, async, epoch, after)
}

// Records handed to a RecordFramer with room before them commit and apply as records handed
// over plainly do, through Commit and through Place (early lock release), and a large record
// (a bulk INSERT's) too.
func TestFramedRecords(t *testing.T) {
	for _, mode := range []string{"commit", "place", "place early"} {
		t.Run(mode, func(t *testing.T) {
			s := repltest.Start(t, nil, NewApplier(nil), nil)
			var c Committer = framedCommitter{s.Node}
			if mode != "commit" {
				c = framedNode{framedCommitter{s.Node}}
			}
			m := NewManager(s.Engine, NewLockManager(DefaultLockConfig()), c)
			if m.headroom != repl.RecordHeadroom {
				t.Fatalf("headroom %d, want %d", m.headroom, repl.RecordHeadroom)
			}
			m.SetEarlyRelease(mode == "place early")
			commit(t, m, "a", "1", "b", "2")
			tx := m.Begin(RepeatableRead, false)
			for i := 0; i < 3000; i++ {
				tx.Set(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "v%d", i))
			}
			tx.Delete([]byte("a"))
			if _, err := tx.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			tx = m.Begin(RepeatableRead, false)
			if got := scan(t, tx, "a", "c", false, false); got != "b=2 " {
				t.Fatalf("a..c: %q", got)
			}
			if got := scan(t, tx, "k02998", "l", false, false); got != "k02998=v2998 k02999=v2999 " {
				t.Fatalf("k02998..: %q", got)
			}
		})
	}
}
