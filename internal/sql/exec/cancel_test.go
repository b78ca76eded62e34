package exec

import (
	"context"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// cancelBound is how soon a cancelled operator must stop: generous, for a noisy shared machine.
const cancelBound = 3 * time.Second

// noSession stands for the session: the operators under test consult it only for a memory
// tracker (no quota, no budget); a call to any other method panics (the embedded interface is nil).
type noSession struct{ expr.Session }

func (noSession) NewMemTracker() *memory.Tracker { return memory.NewTracker(nil, 0) }

// endless yields rows forever without looking at any context, as an in-memory source does.
type endless struct {
	n   int64
	dup bool // the same row each time
}

func (e *endless) Next() ([]types.Value, error) {
	if !e.dup {
		e.n++
	}
	return []types.Value{types.NewInt(e.n % 1000)}, nil
}
func (e *endless) Close() {}

// Each operator that loops over its input checks for cancellation itself, whatever its source.
func TestOperatorsCheckCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env := &expr.Env{Sess: noSession{}, Ctx: ctx}
	onePlan := &Select{Width: 1}
	ops := []struct {
		name string
		it   RowIter
	}{
		{"filter", &filterIter{src: &endless{}, env: env, cond: expr.NewConst(types.NewInt(0))}},
		{"distinct", &distinctIter{src: &endless{dup: true}, env: env, n: 1, seen: map[string]struct{}{}, colls: []*types.Collation{nil}}},
		{"sort", &sortIter{src: &endless{}, env: env, keys: []SortKey{{Idx: 0}}, colls: []*types.Collation{nil}, limit: -1}},
		{"aggregate", &aggIter{pl: onePlan, env: env, src: &endless{}}},
		{"window", &windowIter{pl: &Select{Width: 1, WinBase: 1, NWin: 1, Windows: []*Window{{Fns: []WinFn{{Fn: "row_number"}}}}}, env: env, src: &endless{}}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				for {
					if _, err := op.it.Next(); err != nil {
						done <- err
						return
					}
				}
			}()
			select {
			case err := <-done:
				if !sqlerr.Is(err, sqlerr.ErrQueryInterrupted) {
					t.Fatalf("got %v, want 1317", err)
				}
			case <-time.After(cancelBound):
				t.Fatalf("%s ignores a cancelled context", op.name)
			}
		})
	}
	t.Run("in-list", func(t *testing.T) {
		list := make([]expr.Expr, 100000)
		for i := range list {
			list[i] = expr.NewConst(types.NewInt(int64(i + 1)))
		}
		in := &expr.In{E: expr.NewConst(types.NewInt(0)), List: list}
		if _, err := in.Eval(env, nil); !sqlerr.Is(err, sqlerr.ErrQueryInterrupted) {
			t.Fatalf("got %v, want 1317", err)
		}
	})
	t.Run("sort-compare", func(t *testing.T) {
		rows := make([][]types.Value, 100000)
		for i := range rows {
			rows[i] = []types.Value{types.NewInt(int64(len(rows) - i))}
		}
		si := &sortIter{env: env, keys: []SortKey{{Idx: 0}}, colls: []*types.Collation{nil}, rows: rows}
		if err := si.sortRows(); !sqlerr.Is(err, sqlerr.ErrQueryInterrupted) {
			t.Fatalf("got %v, want 1317", err)
		}
	})
}
