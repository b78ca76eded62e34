package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// The executor runs plans built from its exported nodes alone, without the facade's planner: the
// contract the planner (and the coming sql/plan) fills. Each case is a hand-built plan over
// in-memory rows (a Select's Static source) and the rows it must produce.

var intType = types.ColType{Tp: mysql.TypeLonglong}

func col(i int) *expr.Col { return &expr.Col{Typed: expr.Typed{T: intType}, Idx: i} }

func num(n int64) *expr.Const { return expr.NewConst(types.NewInt(n)) }

// rowsOf is a Static source of integer rows.
func rowsOf(rows ...[]int64) func(*expr.Env) ([][]types.Value, error) {
	return func(*expr.Env) ([][]types.Value, error) {
		out := make([][]types.Value, len(rows))
		for i, r := range rows {
			out[i] = make([]types.Value, len(r))
			for j, v := range r {
				out[i][j] = types.NewInt(v)
			}
		}
		return out, nil
	}
}

// one is a single-column plan over rows of one value each.
func one(vals ...int64) *Select {
	rows := make([][]int64, len(vals))
	for i, v := range vals {
		rows[i] = []int64{v}
	}
	return &Select{Static: rowsOf(rows...), Width: 1, Proj: []expr.Expr{col(0)}, NVisible: 1}
}

func union(ops []SetOp, parts ...*Select) *Select {
	return &Select{Union: &Union{Parts: parts, Ops: ops, Colls: []*types.Collation{nil}}}
}

func TestSelectFromNodes(t *testing.T) {
	pairs := rowsOf([]int64{1, 10}, []int64{2, 20}, []int64{3, 10}, []int64{4, 20}, []int64{5, 10}, []int64{6, 30})
	for _, c := range []struct {
		name string
		pl   *Select
		want string
	}{
		{"where, order desc, limit and offset", &Select{Static: pairs, Width: 2,
			Where: &expr.Cmp{Typed: expr.Typed{T: intType}, Op: opcode.GT, L: col(0), R: num(2)},
			Proj:  []expr.Expr{col(0)}, NVisible: 1, Order: []SortKey{{Idx: 0, Desc: true}}, SortNeeded: true,
			Limit: num(2), Offset: num(1)}, "5|4"},
		{"hidden sort column trimmed", &Select{Static: pairs, Width: 2,
			Proj: []expr.Expr{col(0), col(1)}, NVisible: 1, Order: []SortKey{{Idx: 1}, {Idx: 0, Desc: true}}, SortNeeded: true},
			"5|3|1|4|2|6"},
		{"distinct", &Select{Static: pairs, Width: 2, Proj: []expr.Expr{col(1)}, NVisible: 1, Distinct: true,
			Order: []SortKey{{Idx: 0}}, SortNeeded: true}, "10|20|30"},
		{"group by with count and sum", &Select{Static: pairs, Width: 2, Grouped: true, GroupBy: []expr.Expr{col(1)},
			Aggs: []Agg{{Fn: "count", Star: true, T: intType}, {Fn: "sum", Args: []expr.Expr{col(0)}, T: types.ColType{Tp: mysql.TypeNewDecimal}}},
			Proj: []expr.Expr{col(1), col(2), col(3)}, NVisible: 3, Order: []SortKey{{Idx: 0}}, SortNeeded: true},
			"10,3,9|20,2,6|30,1,6"},
		{"union dedupes", union([]SetOp{SetUnion, SetUnion}, one(1, 2, 2), one(2, 3)), "1|2|3"},
		{"union all keeps", union([]SetOp{SetUnion, SetUnionAll}, one(1, 2, 2), one(2, 3)), "1|2|2|2|3"},
		{"except all counts", union([]SetOp{SetUnion, SetExceptAll}, one(1, 2, 2, 3), one(2)), "1|2|3"},
		{"intersect binds tighter than union", union([]SetOp{SetUnion, SetUnion, SetIntersect}, one(1), one(2, 3), one(3, 4)), "1|3"},
		{"intersect binds tighter than except", union([]SetOp{SetUnion, SetExcept, SetIntersect}, one(1, 2, 3), one(2, 3), one(3)), "1|2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := &expr.Env{Sess: noSession{}, Ctx: context.Background()}
			rows, err := c.pl.Materialize(env)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				var vs []string
				for _, v := range r {
					vs = append(vs, types.ToString(v))
				}
				got = append(got, strings.Join(vs, ","))
			}
			if g := strings.Join(got, "|"); g != c.want {
				t.Fatalf("got %s, want %s", g, c.want)
			}
		})
	}
}

// A plan is immutable: executing it twice gives the same rows (a cached plan is shared).
func TestSelectReopens(t *testing.T) {
	pl := union([]SetOp{SetUnion, SetUnion}, one(3, 1), one(2))
	pl.Union.Order = []SortKey{{Idx: 0}}
	env := &expr.Env{Sess: noSession{}, Ctx: context.Background()}
	for i := 0; i < 2; i++ {
		rows, err := pl.Materialize(env)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows); got != fmt.Sprint(rowsMust(rowsOf([]int64{1}, []int64{2}, []int64{3}))) {
			t.Fatalf("execution %d: %s", i+1, got)
		}
	}
}

func rowsMust(f func(*expr.Env) ([][]types.Value, error)) [][]types.Value {
	rows, _ := f(nil)
	return rows
}
