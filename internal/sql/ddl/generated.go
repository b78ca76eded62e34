package ddl

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Generated columns (col type [GENERATED ALWAYS] AS (expr) [VIRTUAL|STORED]) and expression
// defaults (DEFAULT (expr)), as MySQL 8 defines them. The expression is kept as the parser's
// restored text (like a CHECK constraint's) in catalog.Column.GenExpr / DefaultExpr and checked
// here against the whole table: what it may call and read, in which order. Kiln stores every
// generated column's value in the row (internal/sql/exec generated.go), so ALTER TABLE that adds
// one, changes its expression or changes a column some generated column reads rewrites the rows
// (alter_column.go's rewriter).

// ExprDefaultFunc is the name of the pseudo-function the facade wraps an expression default in
// when the parser refuses DEFAULT (expr) (internal/sql/exprdefault.go): the TiDB parser takes
// only a literal or a function call in parentheses there, and a call's arguments may be any
// expression.
const ExprDefaultFunc = "__kiln_default_expr"

// restoreValueExpr is the stored text of a generated column's or expression default's expression,
// printed as MySQL 8 prints them (SHOW CREATE TABLE, information_schema.COLUMNS): lower-case
// keywords and functions, binary operators spaced and in parentheses: (`a` + 1).
func restoreValueExpr(n ast.ExprNode) (string, error) {
	// Redundant outer parentheses go, as MySQL drops them: SHOW CREATE TABLE's text, created
	// again, gives the same text.
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	var b strings.Builder
	// Column names are kept unqualified (checkGenerated refuses another table's), so a RENAME
	// TABLE leaves the expression valid.
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordLowercase | format.RestoreNameBackQuotes |
		format.RestoreSpacesAroundBinaryOperation | format.RestoreBracketAroundBinaryOperation |
		format.RestoreWithoutSchemaName | format.RestoreWithoutTableName
	// The tree is printed with MySQL's spellings swapped in and then put back as it was: the
	// caller's statement tree is not changed.
	m, _ := n.Accept(mysqlPrint{})
	err := m.(ast.ExprNode).Restore(format.NewRestoreCtx(flags, &b))
	m.Accept(mysqlPrint{undo: true})
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// mysqlPrint rewrites an expression tree, for printing, where the parser's restored text is not
// MySQL's: MySQL prints `<>` for <> and != alike (the parser writes !=), brackets IS NULL, IN,
// LIKE and BETWEEN as it brackets binary operations, and it prints its own
// parentheses around every binary operation, not the ones written, so a parenthesized binary
// operation loses its now redundant parentheses: `(a > 0) AND (a < 10)` prints as
// ((`a` > 0) and (`a` < 10)), as MySQL 8 shows it. With undo it puts the original nodes back.
type mysqlPrint struct{ undo bool }

func (v mysqlPrint) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (v mysqlPrint) Leave(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.BinaryOperationExpr:
		if !v.undo && x.Op == opcode.NE {
			return &mysqlNE{x}, true
		}
	case *ast.IsNullExpr, *ast.PatternInExpr, *ast.PatternLikeOrIlikeExpr, *ast.BetweenExpr:
		if !v.undo {
			return &bracketed{x.(ast.ExprNode)}, true
		}
	case *ast.ParenthesesExpr:
		if !v.undo {
			switch x.Expr.(type) {
			case *ast.BinaryOperationExpr, *mysqlNE, *bracketed:
				return &droppedParens{x}, true
			}
		}
	case *bracketed:
		return x.ExprNode, true
	case *mysqlNE:
		return x.BinaryOperationExpr, true
	case *droppedParens:
		return x.ParenthesesExpr, true
	}
	return n, true
}

// mysqlNE prints a <> comparison as MySQL does.
type mysqlNE struct{ *ast.BinaryOperationExpr }

func (n *mysqlNE) Restore(ctx *format.RestoreCtx) error {
	bracket := ctx.Flags.HasRestoreBracketAroundBinaryOperation()
	if bracket {
		ctx.WritePlain("(")
	}
	if err := n.L.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(" <> ")
	if err := n.R.Restore(ctx); err != nil {
		return err
	}
	if bracket {
		ctx.WritePlain(")")
	}
	return nil
}

// Accept lets the undo pass see the wrapper itself (the embedded Accept would visit the inner
// node only and leave the wrapper in its parent).
func (n *mysqlNE) Accept(v ast.Visitor) (ast.Node, bool) {
	inner, ok := n.BinaryOperationExpr.Accept(v)
	if !ok {
		return inner, false
	}
	n.BinaryOperationExpr = inner.(*ast.BinaryOperationExpr)
	return v.Leave(n)
}

// bracketed prints IS [NOT] NULL, [NOT] IN, [NOT] LIKE and [NOT] BETWEEN in parentheses, as
// MySQL prints them: (`a` is null), (`a` in (1,2)).
type bracketed struct{ ast.ExprNode }

func (n *bracketed) Restore(ctx *format.RestoreCtx) error {
	// BETWEEN inside a binary operation brackets itself under this flag; once is enough.
	saved := ctx.Flags
	ctx.Flags &^= format.RestoreBracketAroundBetweenExpr
	ctx.WritePlain("(")
	err := n.ExprNode.Restore(ctx)
	ctx.WritePlain(")")
	ctx.Flags = saved
	return err
}

func (n *bracketed) Accept(v ast.Visitor) (ast.Node, bool) {
	inner, ok := n.ExprNode.Accept(v)
	if !ok {
		return inner, false
	}
	n.ExprNode = inner.(ast.ExprNode)
	return v.Leave(n)
}

// droppedParens prints a parenthesized binary operation without the parentheses (the operation
// prints its own).
type droppedParens struct{ *ast.ParenthesesExpr }

func (n *droppedParens) Restore(ctx *format.RestoreCtx) error { return n.Expr.Restore(ctx) }

func (n *droppedParens) Accept(v ast.Visitor) (ast.Node, bool) {
	inner, ok := n.ParenthesesExpr.Accept(v)
	if !ok {
		return inner, false
	}
	n.ParenthesesExpr = inner.(*ast.ParenthesesExpr)
	return v.Leave(n)
}

// nonDeterministic are the functions a generated column may not call (MySQL's
// "contains a disallowed function: %s", 3763), with the name MySQL's message gives them.
var nonDeterministic = map[string]string{
	"rand": "rand", "uuid": "uuid", "uuid_short": "uuid_short", "random_bytes": "random_bytes",
	"now": "now", "current_timestamp": "now", "localtime": "now", "localtimestamp": "now",
	"sysdate": "sysdate", "curdate": "curdate", "current_date": "curdate", "curtime": "curtime",
	"current_time": "curtime", "utc_date": "utc_date", "utc_time": "utc_time",
	"utc_timestamp": "utc_timestamp", "connection_id": "connection_id",
	"current_user": "current_user", "user": "user", "session_user": "user", "system_user": "user",
	"current_role": "current_role", "database": "database", "schema": "database",
	"found_rows": "found_rows", "last_insert_id": "last_insert_id", "row_count": "row_count",
	"get_lock": "get_lock", "release_lock": "release_lock", "release_all_locks": "release_all_locks",
	"is_free_lock": "is_free_lock", "is_used_lock": "is_used_lock", "sleep": "sleep",
	"benchmark": "benchmark", "load_file": "load_file", "master_pos_wait": "master_pos_wait",
	"source_pos_wait": "source_pos_wait", "wait_for_executed_gtid_set": "wait_for_executed_gtid_set",
}

// valueExprWalker collects what a generated column's or default's expression reads and the first
// construct it may not hold.
type valueExprWalker struct {
	cols     []string // column names read (as written)
	foreign  string   // a column name qualified by another table than the one checked, as written
	subquery bool
	variable bool
	aggr     bool
	named    string // a disallowed (non-deterministic) function, by MySQL's name for it
	genCol   bool   // checking a generated column (else an expression default)
	table    string // the table's name, which a qualified column name may use
}

func (w *valueExprWalker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		w.subquery = true
		return n, true
	case *ast.VariableExpr:
		w.variable = true
	case *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
		w.aggr = true
	case *ast.ColumnNameExpr:
		w.cols = append(w.cols, x.Name.Name.O)
		if x.Name.Table.O != "" && w.table != "" && !strings.EqualFold(x.Name.Table.O, w.table) && w.foreign == "" {
			w.foreign = x.Name.Table.O + "." + x.Name.Name.O
		}
	case *ast.FuncCallExpr:
		if w.genCol && w.named == "" {
			if m, ok := nonDeterministic[x.FnName.L]; ok {
				w.named = m
			} else if x.FnName.L == "unix_timestamp" && len(x.Args) == 0 {
				w.named = "unix_timestamp" // with an argument it is deterministic
			}
		}
	}
	return n, false
}

func (w *valueExprWalker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// parseValueExpr parses a stored generated or default expression.
func (d *Stmt) parseValueExpr(text string) (ast.ExprNode, error) {
	stmts, err := d.pc.ParseSQL("SELECT " + text)
	if err != nil || len(stmts) != 1 {
		return nil, sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax near '%s'", text)
	}
	return stmts[0].(*ast.SelectStmt).Fields.Fields[0].Expr, nil
}

// exprColumns returns the column names text reads.
func (d *Stmt) exprColumns(text string) ([]string, error) {
	n, err := d.parseValueExpr(text)
	if err != nil {
		return nil, err
	}
	w := &valueExprWalker{}
	n.Accept(w)
	return w.cols, nil
}

// checkGenerated checks every generated column and expression default of t (its columns
// complete and Init-ed) as MySQL 8 does, in column order: what the expression calls (3102, 3763,
// 3765; 3769, 3772 for defaults), what it reads (1054; a generated column or expression default
// defined after it, 3107 / 3767; an AUTO_INCREMENT column, 3109 / 3768), a VIRTUAL column in the
// primary key (3106); then it compiles it over t's row.
func (d *Stmt) checkGenerated(t *catalog.Table) error {
	if len(t.GenCols) == 0 && !t.HasExprDefault {
		return nil
	}
	for i, c := range t.Columns {
		text, gen := c.GenExpr, true
		if text == "" {
			text, gen = c.DefaultExpr, false
		}
		if text == "" {
			continue
		}
		n, err := d.parseValueExpr(text)
		if err != nil {
			return err
		}
		w := &valueExprWalker{genCol: gen}
		n.Accept(w)
		switch {
		case gen && w.named != "":
			return sqlerr.New(sqlerr.ErrGeneratedColumnNamedFunctionIsNotAllowed, "Expression of generated column '%s' contains a disallowed function: %s.", c.Name, w.named)
		case gen && (w.subquery || w.aggr):
			return sqlerr.New(sqlerr.ErrGeneratedColumnFunctionIsNotAllowed, "Expression of generated column '%s' contains a disallowed function.", c.Name)
		case gen && w.variable:
			return sqlerr.New(sqlerr.ErrGeneratedColumnVariables, "Expression of generated column '%s' cannot refer user or system variables.", c.Name)
		case !gen && (w.subquery || w.aggr):
			return sqlerr.New(sqlerr.ErrDefaultValGeneratedFunctionIsNotAllowed, "Default value expression of column '%s' contains a disallowed function.", c.Name)
		case !gen && w.variable:
			return sqlerr.New(sqlerr.ErrDefaultValGeneratedVariables, "Default value expression of column '%s' cannot refer user or system variables.", c.Name)
		}
		for _, name := range w.cols {
			j := t.Col(name)
			if j < 0 || t.Columns[j].Hidden {
				return unknownInExpr(name, gen)
			}
			r := t.Columns[j]
			switch {
			case r.AutoInc && gen:
				return sqlerr.New(sqlerr.ErrGeneratedColumnRefAutoInc, "Generated column '%s' cannot refer to auto-increment column.", c.Name)
			case r.AutoInc:
				return sqlerr.New(sqlerr.ErrDefaultValGeneratedRefAutoInc, "Default value expression of column '%s' cannot refer to an auto-increment column.", c.Name)
			case gen && r.GenExpr != "" && j >= i:
				return sqlerr.New(sqlerr.ErrGeneratedColumnNonPrior, "Generated column can refer only to generated columns defined prior to it.")
			case !gen && (r.GenExpr != "" || r.DefaultExpr != "") && j >= i:
				return sqlerr.New(sqlerr.ErrDefaultValGeneratedNonPrior, "Default value expression of column '%s' cannot refer to a column defined after it if that column is a generated column or has an expression as default value.", c.Name)
			}
		}
		if _, err := CompileCheck(d.pc, t, &catalog.CheckConstraint{Name: c.Name, Expr: text}); err != nil {
			return err
		}
	}
	for _, fk := range t.ForeignKeys {
		if err := d.checkStoredBaseFK(t, fk); err != nil {
			return err
		}
	}
	for _, ic := range t.Indexes[0].Columns {
		if p := t.ColPos[ic.Col]; p >= 0 && t.Columns[p].GenExpr != "" && !t.Columns[p].GenStored {
			return sqlerr.New(sqlerr.ErrUnsupportedOnGeneratedColumn, "'Defining a virtual generated column as primary key' is not supported for generated columns.")
		}
	}
	return nil
}

// checkQualified refuses (1054) a column name in n qualified by another table than t's own: the
// expression is stored unqualified (restoreValueExpr), so this is checked on the statement's tree.
func checkQualified(n ast.ExprNode, t *catalog.Table, gen bool) error {
	w := &valueExprWalker{table: t.Name}
	n.Accept(w)
	if w.foreign != "" {
		return unknownInExpr(w.foreign, gen)
	}
	return nil
}

// unknownInExpr is 1054 for a column a generated column's (gen) or default's expression names.
func unknownInExpr(name string, gen bool) error {
	what := "generated column function"
	if !gen {
		what = "default value expression"
	}
	return sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in '%s'", name, what)
}

// checkStoredBaseFK refuses (3192, InnoDB's rule) a foreign key of t whose action would change a
// column a STORED generated column of t reads: ON DELETE / ON UPDATE CASCADE or SET NULL.
func (d *Stmt) checkStoredBaseFK(t *catalog.Table, fk *catalog.ForeignKey) error {
	acts := func(a string) bool { return a == "CASCADE" || a == "SET NULL" || a == "SET DEFAULT" }
	if !acts(fk.OnDelete) && !acts(fk.OnUpdate) {
		return nil
	}
	for _, c := range t.Columns {
		if c.GenExpr == "" || !c.GenStored {
			continue
		}
		names, err := d.exprColumns(c.GenExpr)
		if err != nil {
			return err
		}
		for _, n := range names {
			j := t.Col(n)
			if j < 0 {
				continue
			}
			for _, id := range fk.Cols {
				if t.Columns[j].ID == id {
					return sqlerr.New(sqlerr.ErrCannotAddForeignBaseColStored, "Cannot add foreign key on the base column of stored column.")
				}
			}
		}
	}
	return nil
}

// checkGenDependency refuses (3108) to drop or rename column name of t while a generated column
// (other than the column itself) reads it.
func (d *Stmt) checkGenDependency(t *catalog.Table, name string) error {
	for _, c := range t.Columns {
		if c.GenExpr == "" || strings.EqualFold(c.Name, name) {
			continue
		}
		cols, err := d.exprColumns(c.GenExpr)
		if err != nil {
			return err
		}
		for _, n := range cols {
			if strings.EqualFold(n, name) {
				return sqlerr.New(sqlerr.ErrDependentByGeneratedColumn, "Column '%s' has a generated column dependency.", name)
			}
		}
	}
	return nil
}

// genExprsFor compiles t's generated and default expressions (one per column offset) for a
// rewrite of its rows in this statement (the executor's GenCache belongs to published tables).
func (d *Stmt) genExprsFor(t *catalog.Table) ([]expr.Expr, error) {
	return exec.CompileGenExprs(t, func(ck *catalog.CheckConstraint) (expr.Expr, error) {
		return CompileCheck(d.pc, t, ck)
	})
}
