package infoschema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// SHOW's results and the CREATE statements SHOW CREATE renders, as MySQL 8 prints them.

// IsVirtualDB reports the schemas Kiln serves itself rather than from the catalog.
func IsVirtualDB(name string) bool {
	switch strings.ToLower(name) {
	case "information_schema", "mysql", "performance_schema", "sys":
		return true
	}
	return false
}

// Show returns the result of a SHOW statement: its columns and rows, filtered by the session's
// privileges where MySQL filters the listing. SHOW GRANTS and SHOW CREATE USER are the facade's
// (they read and check accounts as the account statements do); SHOW ... WHERE is the facade's too
// (the condition is compiled by the planner).
func Show(s Session, env *expr.Env, x *ast.ShowStmt) (Table, error) {
	q := &showQuery{s: s, x: x, cat: s.Catalog()}
	switch x.Tp {
	case ast.ShowDatabases:
		return showDatabases(s, env, q)
	case ast.ShowTables:
		return showTables(s, env, q)
	case ast.ShowColumns:
		return showColumns(s, env, q)
	case ast.ShowIndex:
		return showIndex(s, env, q)
	case ast.ShowVariables:
		return showVariables(s, env, q)
	case ast.ShowStatus:
		return showStatus(s, env, q)
	case ast.ShowWarnings, ast.ShowErrors:
		return showWarnings(s, env, q)
	case ast.ShowProcessList:
		return showProcessList(s, env, q)
	case ast.ShowCreateTable, ast.ShowCreateView:
		return showCreate(s, env, q)
	case ast.ShowCreateDatabase:
		return showCreateDatabase(s, env, q)
	case ast.ShowEngines:
		return showEngines(s, env, q)
	case ast.ShowCollation:
		return showCollation(s, env, q)
	case ast.ShowCharset:
		return showCharset(s, env, q)
	case ast.ShowTableStatus:
		return showTableStatus(s, env, q)
	case ast.ShowTriggers, ast.ShowEvents, ast.ShowProcedureStatus, ast.ShowFunctionStatus, ast.ShowMasterStatus, ast.ShowBinlogStatus, ast.ShowReplicaStatus:
		return showEmpty(s, env, q)
	case ast.ShowPlugins, ast.ShowPrivileges, ast.ShowOpenTables:
		return showNames(s, env, q)
	default:
		return Table{}, sqlerr.New(sqlerr.ErrNotSupportedYet, "this SHOW statement is not supported yet")
	}
}

// showQuery is one SHOW statement and the catalog snapshot it lists.
type showQuery struct {
	s   Session
	x   *ast.ShowStmt
	cat *catalog.Catalog
}

// like applies SHOW ... LIKE 'pattern' (case-insensitive, as MySQL compares identifiers).
func (q *showQuery) like(name string) bool {
	x := q.x
	if x.Pattern == nil {
		return true
	}
	p, ok := x.Pattern.Pattern.(ast.ValueExpr)
	if !ok {
		return true
	}
	m := types.LikeRunes([]rune(strings.ToLower(name)), []rune(strings.ToLower(fmt.Sprint(p.GetValue()))), '\\')
	return m != x.Pattern.Not
}

// dbOf is the schema the SHOW names (FROM db, or db.table), else the current one: 1046 without
// one, 1049 for an unknown schema.
func (q *showQuery) dbOf() (string, error) {
	x := q.x
	db := x.DBName
	if db == "" && x.Table != nil {
		db = x.Table.Schema.O
	}
	if db == "" {
		db = q.s.CurrentDB()
	}
	if db == "" {
		return "", sqlerr.New(sqlerr.ErrNoDB, "No database selected")
	}
	if _, ok := q.cat.DB(db); !ok && !IsVirtualDB(db) {
		return "", sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", db)
	}
	return db, nil
}

// showDatabases answers SHOW DATABASES: the schemas the user may see, sorted.
func showDatabases(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{StringCol("Database")}, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		names := append([]string{"information_schema", "mysql", "performance_schema", "sys"}, q.cat.DBNames()...)
		sort.Strings(names)
		for _, n := range names {
			if q.like(n) && s.VisibleDB(n) {
				rows = append(rows, []types.Value{stringVal(n)})
			}
		}
		return rows, nil
	}), nil
}

// showTables answers SHOW [FULL] TABLES: the tables and views of a schema the user may see, sorted.
func showTables(s Session, env *expr.Env, q *showQuery) (Table, error) {
	db, err := q.dbOf()
	if err != nil {
		return Table{}, err
	}
	cols := []Col{StringCol("Tables_in_" + db)}
	if q.x.Full {
		cols = append(cols, StringCol("Table_type"))
	}
	return table(cols, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		all := s.AllPrivileged()
		for _, t := range q.cat.Tables(db) {
			if !q.like(t.Name) || (!all && !s.VisibleTable(db, t.Name)) {
				continue
			}
			r := []types.Value{stringVal(t.Name)}
			if q.x.Full {
				r = append(r, stringVal("BASE TABLE"))
			}
			rows = append(rows, r)
		}
		for _, v := range q.cat.Views(db) {
			if !q.like(v.Name) || (!all && !s.VisibleTable(db, v.Name)) {
				continue
			}
			r := []types.Value{stringVal(v.Name)}
			if q.x.Full {
				r = append(r, stringVal("VIEW"))
			}
			rows = append(rows, r)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i][0].S < rows[j][0].S })
		return rows, nil
	}), nil
}

// showColumns answers SHOW [FULL] COLUMNS of a table or view (a view's columns come from planning it).
func showColumns(s Session, env *expr.Env, q *showQuery) (Table, error) {
	db, err := q.dbOf()
	if err != nil {
		return Table{}, err
	}
	t, ok := q.cat.Table(db, q.x.Table.Name.O)
	if v, isView := q.cat.View(db, q.x.Table.Name.O); !ok && isView {
		vt, err := s.ViewAsTable(v)
		if err != nil {
			return Table{}, err
		}
		t, ok = vt, true
	}
	if !ok {
		return Table{}, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, q.x.Table.Name.O)
	}
	cols := []Col{StringCol("Field"), StringCol("Type")}
	if q.x.Full {
		cols = append(cols, StringCol("Collation"))
	}
	cols = append(cols, StringCol("Null"), StringCol("Key"), StringCol("Default"), StringCol("Extra"))
	if q.x.Full {
		cols = append(cols, StringCol("Privileges"), StringCol("Comment"))
	}
	return table(cols, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		for _, c := range t.VisibleColumns() {
			if !q.like(c.Name) {
				continue
			}
			ci := ColumnInfo(t, c)
			r := []types.Value{stringVal(c.Name), stringVal(c.Type.SQL())}
			if q.x.Full {
				r = append(r, ci.Coll)
			}
			r = append(r, stringVal(ci.Null), stringVal(ci.Key), ci.Def, stringVal(ci.Extra))
			if q.x.Full {
				r = append(r, stringVal("select,insert,update,references"), stringVal(c.Comment))
			}
			rows = append(rows, r)
		}
		return rows, nil
	}), nil
}

// showIndex answers SHOW INDEX: one row per index column.
func showIndex(s Session, env *expr.Env, q *showQuery) (Table, error) {
	db, err := q.dbOf()
	if err != nil {
		return Table{}, err
	}
	t, ok := q.cat.Table(db, q.x.Table.Name.O)
	if !ok {
		return Table{}, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, q.x.Table.Name.O)
	}
	return table([]Col{StringCol("Table"), IntCol("Non_unique"), StringCol("Key_name"), IntCol("Seq_in_index"), StringCol("Column_name"), StringCol("Collation"), IntCol("Cardinality"), IntCol("Sub_part"), StringCol("Packed"), StringCol("Null"), StringCol("Index_type"), StringCol("Comment"), StringCol("Index_comment"), StringCol("Visible"), StringCol("Expression")},
		func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, r := range IndexRows(t) {
				rows = append(rows, append(r, stringVal("YES"), types.Null))
			}
			return rows, nil
		}), nil
}

// showVariables answers SHOW [GLOBAL|SESSION] VARIABLES.
func showVariables(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{StringCol("Variable_name"), StringCol("Value")}, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		for _, n := range sysvar.Names() {
			if !q.like(n) {
				continue
			}
			v := s.SysVar(sysvar.Must(n), q.x.GlobalScope)
			rows = append(rows, []types.Value{stringVal(n), stringVal(types.ToString(v))})
		}
		return rows, nil
	}), nil
}

// showStatus answers SHOW [GLOBAL|SESSION] STATUS, sorted by name.
func showStatus(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{StringCol("Variable_name"), StringCol("Value")}, func(*expr.Env) ([][]types.Value, error) {
		st := s.StatusVariables(q.x.GlobalScope)
		names := make([]string, 0, len(st))
		for n := range st {
			names = append(names, n)
		}
		sort.Strings(names)
		var rows [][]types.Value
		for _, n := range names {
			if q.like(n) {
				rows = append(rows, []types.Value{stringVal(n), stringVal(st[n])})
			}
		}
		return rows, nil
	}), nil
}

// showWarnings answers SHOW WARNINGS and SHOW ERRORS: the last statement's diagnostics.
func showWarnings(s Session, env *expr.Env, q *showQuery) (Table, error) {
	warns := s.Warnings()
	return table([]Col{StringCol("Level"), Col{Name: "Code", T: types.ColType{Tp: mysql.TypeLong, Len: 4, Unsigned: true, Collation: "binary"}}, StringCol("Message")}, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		for _, w := range warns {
			if q.x.Tp == ast.ShowErrors && w.Level != "Error" {
				continue
			}
			rows = append(rows, []types.Value{stringVal(w.Level), types.NewUint(uint64(w.Code)), stringVal(w.Message)})
		}
		return rows, nil
	}), nil
}

// showProcessList answers SHOW PROCESSLIST: the threads the user may see.
func showProcessList(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{IntCol("Id"), StringCol("User"), StringCol("Host"), StringCol("db"), StringCol("Command"), IntCol("Time"), StringCol("State"), StringCol("Info")}, func(*expr.Env) ([][]types.Value, error) {
		return ProcessRows(s), nil
	}), nil
}

// showCreate answers SHOW CREATE TABLE and SHOW CREATE VIEW (and the log tables' definitions).
func showCreate(s Session, env *expr.Env, q *showQuery) (Table, error) {
	db, err := q.dbOf()
	if err != nil {
		return Table{}, err
	}
	if ddl := SystemLogTable(db, q.x.Table.Name.O); ddl != "" && q.x.Tp == ast.ShowCreateTable {
		name := strings.ToLower(q.x.Table.Name.O)
		return table([]Col{StringCol("Table"), StringCol("Create Table")}, func(*expr.Env) ([][]types.Value, error) {
			return [][]types.Value{{stringVal(name), stringVal(ddl)}}, nil
		}), nil
	}
	_, temp := q.cat.TempTable(db, q.x.Table.Name.O) // the session's own shadows a view too
	if v, isView := q.cat.View(db, q.x.Table.Name.O); isView && !temp {
		return table([]Col{StringCol("View"), StringCol("Create View"), StringCol("character_set_client"), StringCol("collation_connection")}, func(*expr.Env) ([][]types.Value, error) {
			return [][]types.Value{{stringVal(v.Name), stringVal(ShowCreateView(v)), stringVal(v.Charset), stringVal(v.Collation)}}, nil
		}), nil
	}
	t, ok := q.cat.Table(db, q.x.Table.Name.O)
	if ok && q.x.Tp == ast.ShowCreateView {
		return Table{}, sqlerr.New(sqlerr.ErrWrongObject, "'%s.%s' is not VIEW", db, t.Name)
	}
	if !ok {
		return Table{}, sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, q.x.Table.Name.O)
	}
	ai, err := s.AutoIncrementNext(env, t)
	if err != nil {
		return Table{}, err
	}
	ddl := ShowCreateTable(t, ai)
	return table([]Col{StringCol("Table"), StringCol("Create Table")}, func(*expr.Env) ([][]types.Value, error) {
		return [][]types.Value{{stringVal(t.Name), stringVal(ddl)}}, nil
	}), nil
}

// showCreateDatabase answers SHOW CREATE DATABASE [IF NOT EXISTS].
func showCreateDatabase(s Session, env *expr.Env, q *showQuery) (Table, error) {
	d, ok := q.cat.DB(q.x.DBName)
	if !ok {
		return Table{}, sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", q.x.DBName)
	}
	return table([]Col{StringCol("Database"), StringCol("Create Database")}, func(*expr.Env) ([][]types.Value, error) {
		return [][]types.Value{{stringVal(d.Name), stringVal(ShowCreateDatabase(d, q.x.IfNotExists))}}, nil
	}), nil
}

// showEngines answers SHOW ENGINES: the one engine, under MySQL's name for a transactional one.
func showEngines(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{StringCol("Engine"), StringCol("Support"), StringCol("Comment"), StringCol("Transactions"), StringCol("XA"), StringCol("Savepoints")}, func(*expr.Env) ([][]types.Value, error) {
		return [][]types.Value{{stringVal("InnoDB"), stringVal("DEFAULT"), stringVal("Kiln: pebble LSM under a replicated binlog"), stringVal("YES"), stringVal("NO"), stringVal("YES")}}, nil
	}), nil
}

// showCollation answers SHOW COLLATION.
func showCollation(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{StringCol("Collation"), StringCol("Charset"), IntCol("Id"), StringCol("Default"), StringCol("Compiled"), IntCol("Sortlen"), StringCol("Pad_attribute")}, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		for _, r := range CollationRows() {
			if q.like(r[0].S) {
				rows = append(rows, r)
			}
		}
		return rows, nil
	}), nil
}

// showCharset answers SHOW CHARACTER SET.
func showCharset(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{StringCol("Charset"), StringCol("Description"), StringCol("Default collation"), IntCol("Maxlen")}, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		for _, r := range CharsetRows() {
			if q.like(r[0].S) {
				rows = append(rows, r)
			}
		}
		return rows, nil
	}), nil
}

// showTableStatus answers SHOW TABLE STATUS: tables the user may see, the log tables in mysql, and views.
func showTableStatus(s Session, env *expr.Env, q *showQuery) (Table, error) {
	db, err := q.dbOf()
	if err != nil {
		return Table{}, err
	}
	return table([]Col{StringCol("Name"), StringCol("Engine"), IntCol("Version"), StringCol("Row_format"), IntCol("Rows"), IntCol("Avg_row_length"), IntCol("Data_length"), IntCol("Max_data_length"), IntCol("Index_length"), IntCol("Data_free"), IntCol("Auto_increment"), StringCol("Create_time"), StringCol("Update_time"), StringCol("Check_time"), StringCol("Collation"), StringCol("Checksum"), StringCol("Create_options"), StringCol("Comment")},
		func(env *expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, t := range q.cat.Tables(db) {
				if q.like(t.Name) && s.VisibleTable(db, t.Name) {
					ai, err := s.AutoIncrementValue(env, t)
					if err != nil {
						return nil, err
					}
					rows = append(rows, []types.Value{stringVal(t.Name), stringVal(t.Engine), intVal(10), stringVal("Dynamic"), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), ai, types.Null, types.Null, types.Null, stringVal(t.Collation), types.Null, stringVal(""), stringVal(t.Comment)})
				}
			}
			if strings.EqualFold(db, "mysql") {
				for _, n := range []string{"general_log", "slow_log"} {
					if q.like(n) {
						rows = append(rows, []types.Value{stringVal(n), stringVal("CSV"), intVal(10), stringVal("Dynamic"), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), types.Null, types.Null, types.Null, types.Null, stringVal("utf8mb3_general_ci"), types.Null, stringVal(""), stringVal(map[string]string{"general_log": "General log", "slow_log": "Slow log"}[n])})
					}
				}
			}
			for _, v := range q.cat.Views(db) {
				if q.like(v.Name) {
					r := []types.Value{stringVal(v.Name)}
					for range 16 {
						r = append(r, types.Null)
					}
					rows = append(rows, append(r, stringVal("VIEW")))
				}
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i][0].S < rows[j][0].S })
			return rows, nil
		}), nil
}

// showEmpty answers SHOW TRIGGERS, EVENTS, PROCEDURE/FUNCTION STATUS, MASTER/BINARY LOG STATUS and REPLICA
// STATUS: MySQL's columns, no rows (EmptyShow).
func showEmpty(s Session, env *expr.Env, q *showQuery) (Table, error) {
	if q.x.Tp == ast.ShowTriggers || q.x.Tp == ast.ShowEvents {
		if _, err := q.dbOf(); err != nil {
			return Table{}, err
		}
	}
	pl, _ := EmptyShow(q.x.Tp)
	return pl, nil
}

// showNames answers SHOW PLUGINS, PRIVILEGES and OPEN TABLES: a Name column and no rows.
func showNames(s Session, env *expr.Env, q *showQuery) (Table, error) {
	return table([]Col{StringCol("Name")}, func(*expr.Env) ([][]types.Value, error) { return nil, nil }), nil
}

// ShowCreateTable renders a table definition the way MySQL 8 does.
// autoInc is the table's next AUTO_INCREMENT value (shown if above 1).
func ShowCreateTable(t *catalog.Table, autoInc uint64) string {
	var b strings.Builder
	if catalog.IsTempID(t.ID) {
		fmt.Fprintf(&b, "CREATE TEMPORARY TABLE %s (\n", QuoteIdent(t.Name)) // the session's own
	} else {
		fmt.Fprintf(&b, "CREATE TABLE %s (\n", QuoteIdent(t.Name))
	}
	var lines []string
	for _, c := range t.VisibleColumns() {
		l := fmt.Sprintf("  %s %s", QuoteIdent(c.Name), c.Type.SQL())
		if expr.IsStringType(c.Type) && c.Type.Collation != "binary" && c.Type.Collation != t.Collation {
			l += fmt.Sprintf(" CHARACTER SET %s COLLATE %s", c.Type.Charset, c.Type.Collation)
		}
		if c.GenExpr != "" {
			// MySQL's order: GENERATED ALWAYS AS (expr) VIRTUAL|STORED, then NOT NULL, no DEFAULT.
			l += " GENERATED ALWAYS AS (" + c.GenExpr + ")"
			if c.GenStored {
				l += " STORED"
			} else {
				l += " VIRTUAL"
			}
			if c.NotNull {
				l += " NOT NULL"
			}
			if c.Comment != "" {
				l += " COMMENT " + quoteString(c.Comment)
			}
			lines = append(lines, l)
			continue
		}
		if c.NotNull {
			l += " NOT NULL"
		} else if c.Type.Tp == mysql.TypeTimestamp {
			l += " NULL"
		}
		switch {
		case c.DefaultExpr != "":
			l += " DEFAULT (" + c.DefaultExpr + ")"
		case c.DefaultNow:
			l += " DEFAULT CURRENT_TIMESTAMP"
			if c.Type.Frac > 0 {
				l += fmt.Sprintf("(%d)", c.Type.Frac)
			}
		case c.HasDefault && c.Default.IsNull():
			l += " DEFAULT NULL"
		case c.HasDefault && c.Type.Tp == mysql.TypeBit:
			l += fmt.Sprintf(" DEFAULT b'%b'", c.Default.U())
		case c.HasDefault:
			l += " DEFAULT " + quoteString(types.ToString(c.Default))
		case !c.NotNull && !c.AutoInc && !c.Type.IsBlob():
			l += " DEFAULT NULL"
		}
		if c.OnUpdateNow {
			l += " ON UPDATE CURRENT_TIMESTAMP"
			if c.Type.Frac > 0 {
				l += fmt.Sprintf("(%d)", c.Type.Frac)
			}
		}
		if c.AutoInc {
			l += " AUTO_INCREMENT"
		}
		if c.Comment != "" {
			l += " COMMENT " + quoteString(c.Comment)
		}
		lines = append(lines, l)
	}
	for _, ix := range t.Indexes {
		if ix.Primary && t.HiddenPK {
			continue
		}
		var parts []string
		for i, ci := range ix.Offsets {
			p := QuoteIdent(t.Columns[ci].Name)
			if ix.Columns[i].Prefix > 0 {
				p += fmt.Sprintf("(%d)", ix.Columns[i].Prefix)
			}
			if ix.Columns[i].Desc {
				p += " DESC"
			}
			parts = append(parts, p)
		}
		switch {
		case ix.Primary:
			lines = append(lines, fmt.Sprintf("  PRIMARY KEY (%s)", strings.Join(parts, ",")))
		case ix.Unique:
			lines = append(lines, fmt.Sprintf("  UNIQUE KEY %s (%s)", QuoteIdent(ix.Name), strings.Join(parts, ",")))
		default:
			lines = append(lines, fmt.Sprintf("  KEY %s (%s)", QuoteIdent(ix.Name), strings.Join(parts, ",")))
		}
	}
	lines = append(lines, showForeignKeys(t)...)
	lines = append(lines, showChecks(t)...)
	b.WriteString(strings.Join(lines, ",\n"))
	fmt.Fprintf(&b, "\n) ENGINE=%s", t.Engine)
	if autoInc > 1 {
		fmt.Fprintf(&b, " AUTO_INCREMENT=%d", autoInc)
	}
	fmt.Fprintf(&b, " DEFAULT CHARSET=%s COLLATE=%s", t.Charset, t.Collation)
	if t.Comment != "" {
		b.WriteString(" COMMENT=" + quoteString(t.Comment))
	}
	return b.String()
}

// quoteString quotes a string literal as SHOW CREATE TABLE does: quotes doubled; backslash, NUL,
// newline and carriage return escaped.
func quoteString(s string) string {
	return "'" + strings.NewReplacer("\\", "\\\\", "'", "''", "\n", "\\n", "\r", "\\r", "\x00", "\\0").Replace(s) + "'"
}

// QuoteIdent quotes an identifier with backticks, doubling those inside it.
func QuoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// ShowCreateView renders SHOW CREATE VIEW's statement as MySQL 8 does.
func ShowCreateView(v *catalog.View) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE ALGORITHM=%s DEFINER=%s SQL SECURITY %s VIEW `%s`", v.Algorithm, v.Definer, v.Security, v.Name)
	if len(v.Columns) > 0 {
		q := make([]string, len(v.Columns))
		for i, c := range v.Columns {
			q[i] = "`" + c + "`"
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(q, ","))
	}
	fmt.Fprintf(&b, " AS %s", v.Select)
	if v.CheckOption != "NONE" {
		fmt.Fprintf(&b, " WITH %s CHECK OPTION", v.CheckOption)
	}
	return b.String()
}

// ShowCreateDatabase renders SHOW CREATE DATABASE [IF NOT EXISTS] as MySQL 8 does.
func ShowCreateDatabase(d *catalog.Database, ifNotExists bool) string {
	ine := ""
	if ifNotExists {
		ine = "/*!32312 IF NOT EXISTS*/ "
	}
	return fmt.Sprintf("CREATE DATABASE %s%s /*!40100 DEFAULT CHARACTER SET %s COLLATE %s */ /*!80016 DEFAULT ENCRYPTION='N' */", ine, QuoteIdent(d.Name), d.Charset, d.Collation)
}

// showForeignKeys renders the CONSTRAINT lines of SHOW CREATE TABLE, sorted by name as MySQL 8
// (and MariaDB) list them: InnoDB prints them from its per-table set of foreign keys, ordered by
// the constraint id (dict_foreign_compare). SQLAlchemy's MySQL dialect reflects them in this
// order.
func showForeignKeys(t *catalog.Table) []string {
	fks := slices.Clone(t.ForeignKeys)
	slices.SortStableFunc(fks, func(a, b *catalog.ForeignKey) int { return strings.Compare(a.Name, b.Name) })
	var out []string
	for _, fk := range fks {
		cc, rc := exec.FKColumnLists(t, fk)
		ref := "`" + fk.RefTable + "`"
		if !strings.EqualFold(fk.RefDB, t.DB) {
			ref = "`" + fk.RefDB + "`." + ref
		}
		l := fmt.Sprintf("  CONSTRAINT `%s` FOREIGN KEY (%s) REFERENCES %s (%s)", fk.Name, strings.Join(cc, ", "), ref, strings.Join(rc, ", "))
		// MySQL 8 keeps an explicit RESTRICT apart from the default (NO ACTION, which it leaves out
		// whether given or not) and shows it; ORMs read the rule back from here (SQLAlchemy's
		// reflection expects ON DELETE RESTRICT). MariaDB leaves RESTRICT out instead.
		if fk.OnDelete != "" && fk.OnDelete != "NO ACTION" {
			l += " ON DELETE " + fk.OnDelete
		}
		if fk.OnUpdate != "" && fk.OnUpdate != "NO ACTION" {
			l += " ON UPDATE " + fk.OnUpdate
		}
		out = append(out, l)
	}
	return out
}

// showChecks renders the CHECK constraint lines of SHOW CREATE TABLE, sorted by name as MySQL 8
// lists them (the manual's example in "CHECK Constraints": c1_nonzero, c2_positive, t1_chk_1...).
func showChecks(t *catalog.Table) []string {
	cks := slices.Clone(t.Checks)
	slices.SortStableFunc(cks, func(a, b *catalog.CheckConstraint) int { return strings.Compare(a.Name, b.Name) })
	var out []string
	for _, ck := range cks {
		l := fmt.Sprintf("  CONSTRAINT `%s` CHECK (%s)", ck.Name, ck.Expr)
		if !ck.Enforced {
			l += " /*!80016 NOT ENFORCED */"
		}
		out = append(out, l)
	}
	return out
}
