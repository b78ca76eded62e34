package plan

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// ONLY_FULL_GROUP_BY (part of MySQL 8's default sql_mode): in a grouped query, a column outside
// aggregate functions in the select list, HAVING or ORDER BY must be a GROUP BY column, or be
// functionally dependent on them: the GROUP BY columns include the whole primary key (or a unique
// key of NOT NULL columns) of its table. A select-list expression that is itself a GROUP BY
// expression is fine. Equalities in WHERE that MySQL also uses to prove dependence are not.

// bareColumns collects the column references of n that are outside aggregates and subqueries.
type bareColumns struct {
	cols []*ast.ColumnNameExpr
}

func (v *bareColumns) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr, *ast.AggregateFuncExpr:
		return n, true
	case *ast.FuncCallExpr:
		if x.FnName.L == "any_value" { // ANY_VALUE() exempts its argument, as in MySQL
			return n, true
		}
	case *ast.ColumnNameExpr:
		v.cols = append(v.cols, x)
	}
	return n, false
}

func (v *bareColumns) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// groupCheck knows a grouped query's GROUP BY.
type groupCheck struct {
	sc       *Scope
	pl       *exec.Select
	grouped  map[int]bool    // scope columns in GROUP BY
	exprs    map[string]bool // GROUP BY expressions' text
	levelsOK map[int]bool    // levels whose every column is determined by GROUP BY
	noGroup  bool            // aggregates without GROUP BY
}

func newGroupCheck(sc *Scope, pl *exec.Select, sel *ast.SelectStmt, groupNodes []ast.ExprNode) *groupCheck {
	g := &groupCheck{sc: sc, pl: pl, grouped: map[int]bool{}, exprs: map[string]bool{}, levelsOK: map[int]bool{}, noGroup: sel.GroupBy == nil}
	for _, e := range pl.GroupBy {
		if ce, ok := e.(*expr.Col); ok {
			g.grouped[ce.Idx] = true
		}
	}
	for _, n := range groupNodes {
		g.exprs[exprText(n)] = true
	}
	for li, lv := range pl.Levels {
		if lv.Acc == nil {
			continue
		}
		tbl := lv.Acc.Tbl
		for _, ix := range tbl.Indexes {
			if !ix.Unique || (ix.Primary && tbl.HiddenPK) {
				continue
			}
			all := true
			for _, ci := range ix.Offsets {
				if !tbl.Columns[ci].NotNull || !g.grouped[lv.Off+ci] {
					all = false
					break
				}
			}
			if all {
				g.levelsOK[li] = true
			}
		}
	}
	return g
}

// check reports the first column of n that breaks the rule, as MySQL words it for clause
// ("SELECT list", "ORDER BY clause") and 1-based position pos.
func (g *groupCheck) check(n ast.ExprNode, clause string, pos int) error {
	if !g.noGroup && g.exprs[exprText(n)] {
		return nil
	}
	v := &bareColumns{}
	n.Accept(v)
	for _, cn := range v.cols {
		i, err := g.sc.find(cn.Name.Schema.O, cn.Name.Table.O, cn.Name.Name.O)
		if err != nil || i < 0 {
			continue // an alias, or an outer column: not this query's to check
		}
		if g.grouped[i] || g.levelsOK[g.sc.Cols[i].level] {
			continue
		}
		col := &g.sc.Cols[i]
		name := fmt.Sprintf("%s.%s.%s", col.db, col.orgTable, col.Name)
		if col.db == "" {
			name = fmt.Sprintf("%s.%s", col.table, col.Name)
		}
		if g.noGroup {
			return sqlerr.New(sqlerr.ErrMixOfGroupFuncAndFields, "In aggregated query without GROUP BY, expression #%d of %s contains nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by", pos, clause, name)
		}
		return sqlerr.New(sqlerr.ErrWrongFieldWithGroup, "Expression #%d of %s is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by", pos, clause, name)
	}
	return nil
}
