package exec

import (
	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/txn"
)

// Level is one FROM item in nested-loop order. Its rows are placed at row[Off:Off+Width] of the
// combined row. Exactly one of Acc, Sub and Fn is set.
type Level struct {
	Acc    *Access // a base table
	Sub    *Select // a derived table, a view or a virtual table: materialised once per execution
	Alias  string
	Off    int
	Width  int
	Left   bool      // LEFT JOIN: an unmatched outer row gets NULLs here
	CTE    CTEKind   // what kind of CTE Sub is, if any (EXPLAIN shows it); in Left's padding
	Filter expr.Expr // conditions checked once this level's row is placed
	// Implied: Residual is Filter without the condition that the access path's range bounds
	// imply when they are exact (an integer column BETWEEN two integers, or an OR of such ranges
	// read as a multi-range scan: accessIter.exact). The
	// rows of such a scan are checked against Residual (nil: none), sparing a re-check of the
	// bounds per row; any other opening of the access checks Filter.
	Implied  bool
	Residual expr.Expr
	Indep    bool // reads nothing of earlier levels: its filtered rows can be read once per execution
	// Keys: equality conditions of Filter by which the rows of an inner level materialised once
	// (a derived table, view, CTE or constant table function, or a HashScan base table) are
	// looked up by hash for each outer row instead of all being scanned (joinIter.lookupRows).
	// Filter still checks them.
	Keys []HashKey
	// HashScan: a base-table level whose access reads nothing of the earlier levels but whose
	// conditions do, through Keys: its rows are read once, filtered by Local (the conditions on
	// this level alone), and looked up by hash for each outer row (a hash join).
	HashScan bool
	Local    expr.Expr

	// Fn is a table function (JSON_TABLE): its rows for the current row of the earlier levels.
	Fn *JSONTable
}

// Agg is one aggregate function.
type Agg struct {
	Fn       string // lower case: count, sum, avg, min, max, group_concat, json_arrayagg, ...
	Args     []expr.Expr
	Distinct bool
	Star     bool          // COUNT(*)
	Sep      string        // GROUP_CONCAT's SEPARATOR
	T        types.ColType // the result type
	Order    []SortKey     // GROUP_CONCAT ... ORDER BY, over Args
	NOrder   int           // trailing args that only ORDER BY uses
}

// HashKey is one condition `row[Col] = Probe` of a level's filter: Col an offset in the level's
// rows, Probe read from the earlier levels' row before the level opens. Both sides are integers
// (Coll nil) or character strings compared in Coll.
type HashKey struct {
	Col   int
	Probe expr.Expr
	Coll  *types.Collation
}

// SortKey is one ORDER BY key: a column of the rows it sorts (the projection, or an aggregate's
// arguments).
type SortKey struct {
	Idx  int
	Desc bool
}

// Select is an immutable plan for a SELECT (the planner fills it); each execution opens new
// iterators over it (Open), so a cached plan is shared by executions with different parameters.
type Select struct {
	Levels  []*Level
	Width   int       // of the combined row of all levels
	Where   expr.Expr // post-join filter
	Grouped bool
	GroupBy []expr.Expr
	Aggs    []Agg
	Having  expr.Expr
	// Windows are the block's distinct windows, computed after HAVING into columns WinBase.. of
	// the row (WinBase+NWin wide) that Proj reads; nil for a block without window functions.
	Windows    []*Window
	WinBase    int
	NWin       int
	Proj       []expr.Expr // the select list, then hidden ORDER BY columns
	NVisible   int         // the columns of Proj the client sees
	Distinct   bool
	Order      []SortKey // over Proj
	SortNeeded bool      // false when the access path delivers Order
	Limit      expr.Expr
	Offset     expr.Expr
	Cols       []proto.Column // the result set's column definitions
	Lock       txn.LockMode   // FOR UPDATE / FOR SHARE
	Union      *Union         // set: the plan is a UNION / EXCEPT / INTERSECT, the rest unused
	Correlated bool           // reads an enclosing query's row (a correlated subquery)
	// Static produces the rows of a virtual table (information_schema, SHOW).
	Static func(env *expr.Env) ([][]types.Value, error)
}
