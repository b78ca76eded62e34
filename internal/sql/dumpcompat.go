package sql

// What dump and admin tools (mysqldump, mariadb-dump, GUI clients) read besides the data and that
// needs the session: SHOW ... WHERE (compiled by the planner) and the AUTO_INCREMENT counter that
// SHOW CREATE TABLE and information_schema.TABLES report. The tables themselves (the empty ones,
// the constraint tables, PARTITIONS, ...) are internal/sql/infoschema's (tables.go).

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// showWhere adds the condition of SHOW ... WHERE to a SHOW plan: it reads the result's columns by
// their names (SHOW VARIABLES WHERE Variable_name = 'x', SHOW FUNCTION STATUS WHERE Db = 'd').
func (s *Session) showWhere(pl *exec.Select, where ast.ExprNode) error {
	sc := &plan.Scope{}
	for i, c := range pl.Cols {
		sc.Cols = append(sc.Cols, plan.ScopeCol{Name: c.Name, T: pl.Proj[i].Type()})
	}
	var e expr.Expr
	err := s.resolve(func(p *plan.Planner) (err error) {
		e, err = p.NewCompiler(sc).Compile(where)
		return err
	})
	if err != nil {
		return err
	}
	pl.Where = e
	return nil
}

// autoIncNext is the next AUTO_INCREMENT value of a table as SHOW CREATE TABLE and
// information_schema.TABLES report it: the counter if this server has used it, else the largest
// value + 1, and at least the AUTO_INCREMENT table option. 0 if the table has no such column.
func (s *Session) autoIncNext(env *expr.Env, t *catalog.Table) (uint64, error) {
	if t.AutoIncCol < 0 {
		return 0, nil
	}
	col := t.Columns[t.AutoIncCol]
	db := s.db
	db.autoMu.Lock()
	st, ok := db.autoInc[autoKey{t.ID, col.ID}]
	db.autoMu.Unlock()
	if ok {
		st.mu.Lock()
		loaded, next := st.loaded, st.next
		st.mu.Unlock()
		if loaded {
			return next, nil
		}
	}
	mx, err := maxAutoInc(env, t, col)
	if err != nil {
		return 0, err
	}
	return max(mx+1, t.AutoIncBase), nil
}

// autoIncValue is the AUTO_INCREMENT column of information_schema.TABLES and SHOW TABLE STATUS: the
// next value, or NULL for a table without an AUTO_INCREMENT column.
func (s *Session) autoIncValue(env *expr.Env, t *catalog.Table) (types.Value, error) {
	if t.AutoIncCol < 0 {
		return types.Null, nil
	}
	n, err := s.autoIncNext(env, t)
	if err != nil {
		return types.Null, err
	}
	return types.NewUint(n), nil
}
