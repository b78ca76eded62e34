package sql

import (
	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/txn"
)

// level is one FROM item in nested-loop order. Its rows are placed at row[off:off+width] of the
// combined row.
type level struct {
	acc    *access     // a base table
	sub    *selectPlan // a derived table
	alias  string
	off    int
	width  int
	left   bool      // LEFT JOIN: an unmatched outer row gets NULLs here
	filter expr.Expr // conditions checked once this level's row is placed
	indep  bool      // reads nothing of earlier levels: its filtered rows can be read once per execution
}

// aggSpec is one aggregate function.
type aggSpec struct {
	fn       string
	args     []expr.Expr
	distinct bool
	star     bool
	sep      string
	t        types.ColType
	order    []sortKey // GROUP_CONCAT ... ORDER BY, over args
	nOrder   int       // trailing args that only ORDER BY uses
}

type sortKey struct {
	idx  int
	desc bool
}

// selectPlan is an immutable plan for a SELECT; each execution opens new iterators over it.
type selectPlan struct {
	levels     []*level
	width      int
	where      expr.Expr // post-join filter
	grouped    bool
	groupBy    []expr.Expr
	aggs       []aggSpec
	having     expr.Expr
	proj       []expr.Expr
	nVisible   int
	distinct   bool
	order      []sortKey
	sortNeeded bool
	limit      expr.Expr
	offset     expr.Expr
	cols       []proto.Column
	lock       txn.LockMode
	union      *unionPlan
	correlated bool
	// static produces the rows of a virtual table (information_schema, SHOW).
	static func(env *expr.Env) ([][]types.Value, error)
}
