package plan

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Common table expressions (WITH, WITH RECURSIVE), MySQL 8.0's semantics.
//
// A WITH clause pushes its CTEs on the planner's scope (PushWith) for the query block (or UNION, or
// UPDATE/DELETE) that carries it; a FROM item that names no database resolves to the innermost CTE
// of that name before any table, so a CTE shadows a table of the same name. Each reference plans
// the CTE's body again as a derived table (so a CTE referenced twice is materialised twice, as
// MySQL does when it does not share the temporary table), seeing only the CTEs defined before it
// (and itself, under WITH RECURSIVE). A view's body sees none of the query's CTEs.
//
// A recursive CTE's body is a UNION whose leading members do not name the CTE (the anchor) and
// whose other members name it exactly once, in their FROM clause (the recursive members). The
// anchor fixes the column names and types; the self reference reads the rows of the previous
// iteration (exec.WorkTable) and exec.RecursiveCTE iterates.

// cteScope is the CTEs in scope while a statement is planned: a stack, innermost last.
type cteScope struct{ defs []*cteDef }

// cteDef is one WITH item.
type cteDef struct {
	cte       *ast.CommonTableExpression
	name      string // lower case
	recursive bool   // defined by WITH RECURSIVE: its body sees itself
	// self is set while the CTE's recursive members are planned: what the self reference reads.
	self *selfRef
}

// selfRef is a recursive CTE's reference to itself in its recursive members.
type selfRef struct {
	work  *exec.WorkTable
	cols  []proto.Column
	types []types.ColType
	depth int16 // selDepth of the recursive member: a reference planned deeper is in a subquery
}

// PushWith brings w's CTEs into scope; the caller calls restore once the statement (or query
// block) that carries w is planned. Two CTEs of one WITH with the same name are error 1066.
func (p *Planner) PushWith(w *ast.WithClause) (restore func(), err error) {
	if w == nil {
		return func() {}, nil
	}
	if p.cte == nil {
		p.cte = &cteScope{}
	}
	saved := p.cte.defs
	defs := saved[:len(saved):len(saved)] // appends copy: the caller's scope is never rewritten
	for i, c := range w.CTEs {
		for _, o := range w.CTEs[:i] {
			if o.Name.L == c.Name.L {
				return nil, sqlerr.New(sqlerr.ErrNonUniqTable, "Not unique table/alias: '%s'", c.Name.O)
			}
		}
		defs = append(defs, &cteDef{cte: c, name: c.Name.L, recursive: w.IsRecursive})
	}
	p.cte.defs = defs
	return func() { p.cte.defs = saved }, nil
}

// lookupCTE finds the CTE a table name without a database refers to, innermost first, with its
// index in the scope (the CTEs before it are the ones its body sees).
func (p *Planner) lookupCTE(tn *ast.TableName) (*cteDef, int) {
	if p.cte == nil || tn == nil || tn.Schema.O != "" {
		return nil, -1
	}
	name := strings.ToLower(tn.Name.O)
	for i := len(p.cte.defs) - 1; i >= 0; i-- {
		if p.cte.defs[i].name == name {
			return p.cte.defs[i], i
		}
	}
	return nil, -1
}

// cteLevel resolves a FROM item naming a CTE: its body planned as a derived table, or, inside its
// own recursive member, the working table.
func (b *selectBuilder) cteLevel(lv *exec.Level, li int, it fromItem, def *cteDef, idx int) error {
	for _, other := range b.pl.Levels {
		if strings.EqualFold(other.Alias, it.alias) {
			return sqlerr.New(sqlerr.ErrNonUniqTable, "Not unique table/alias: '%s'", it.alias)
		}
	}
	var sub *exec.Select
	var err error
	kind := exec.CTEWork
	if def.self != nil {
		sub, err = b.selfLevel(def, it)
	} else {
		sub, kind, err = b.p.planCTE(def, idx)
	}
	if err != nil {
		return err
	}
	setSub(lv, b.sc, sub, "", it.alias, def.cte.Name.O, li)
	lv.CTE = kind
	return nil
}

// selfLevel is a recursive member's reference to its own CTE: the previous iteration's rows.
func (b *selectBuilder) selfLevel(def *cteDef, it fromItem) (*exec.Select, error) {
	s := def.self
	if b.p.selDepth != s.depth {
		return nil, errSingleReference(def)
	}
	if it.left {
		return nil, sqlerr.New(sqlerr.ErrCTERecursiveForbiddenJoinOrder, "In recursive query block of Recursive Common Table Expression '%s', the recursive table must neither be in the right argument of a LEFT JOIN, nor be forced to be non-first with join order hints", def.cte.Name.O)
	}
	return staticPlan(s.work.Rows, s.cols, s.types), nil
}

// staticPlan is a plan whose rows come from rows (a CTE's), projected as they are.
func staticPlan(rows func(*expr.Env) ([][]types.Value, error), cols []proto.Column, ts []types.ColType) *exec.Select {
	pl := &exec.Select{Static: rows, Cols: cols, NVisible: len(cols)}
	for i, t := range ts {
		pl.Proj = append(pl.Proj, &expr.Col{Typed: expr.Typed{T: t}, Idx: i, Name: cols[i].Name})
	}
	return pl
}

func errSingleReference(def *cteDef) error {
	return sqlerr.New(sqlerr.ErrCTERecursiveRequiresSingleReference, "In recursive query block of Recursive Common Table Expression '%s', the recursive table must be referenced only once, and not in any subquery", def.cte.Name.O)
}

// planCTE plans a CTE's body for one reference, seeing the CTEs before it in scope (idx is its
// index there) and, if recursive, itself. It plans without an enclosing scope: the body reads no
// outer query's row.
func (p *Planner) planCTE(def *cteDef, idx int) (*exec.Select, exec.CTEKind, error) {
	saved := p.cte.defs
	n := idx
	if def.recursive {
		n++
	}
	p.cte.defs = saved[:n:n]
	defer func() { p.cte.defs = saved }()
	q := def.cte.Query.Query
	if def.recursive {
		return p.planRecursive(def, q)
	}
	sp, err := p.PlanResultSet(q, nil)
	if err != nil {
		return nil, 0, err
	}
	sp, err = withColumnList(def, sp)
	return sp, exec.CTEPlain, err
}

// withColumnList names the CTE's columns by its column list (WITH a(x, y) AS ...): error 1353 when
// the counts differ, 1060 for a duplicate name.
func withColumnList(def *cteDef, sp *exec.Select) (*exec.Select, error) {
	names := def.cte.ColNameList
	if len(names) > 0 && len(names) != sp.NVisible {
		return nil, sqlerr.New(sqlerr.ErrViewWrongList, "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts")
	}
	cp := *sp
	cp.Cols = slices.Clone(sp.Cols)
	for i := range names {
		cp.Cols[i].Name = names[i].O
	}
	seen := map[string]bool{}
	for i := 0; i < cp.NVisible; i++ {
		n := strings.ToLower(cp.Cols[i].Name)
		if seen[n] {
			return nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", cp.Cols[i].Name)
		}
		seen[n] = true
	}
	return &cp, nil
}
