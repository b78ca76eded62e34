package sql

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// vcol declares a column of a virtual result (SHOW, information_schema).
type vcol = infoschema.Col

// stringCol and intCol declare a string (VARCHAR) or integer (BIGINT) column of a virtual result.
func stringCol(name string) vcol { return infoschema.StringCol(name) }
func intCol(name string) vcol    { return infoschema.IntCol(name) }

func staticPlan(cols []vcol, rows func(env *expr.Env) ([][]types.Value, error)) *exec.Select {
	pl := &exec.Select{Static: rows}
	for i, c := range cols {
		pl.Cols = append(pl.Cols, resultColumn(c.Name, nil, c.T))
		pl.Proj = append(pl.Proj, &expr.Col{Typed: expr.Typed{T: c.T}, Idx: i, Name: c.Name})
	}
	pl.NVisible = len(cols)
	return pl
}

// tablePlan is the plan of an infoschema table: its rows, computed when the statement runs.
func tablePlan(t infoschema.Table) *exec.Select { return staticPlan(t.Cols, t.Rows) }

func isVirtualDB(name string) bool {
	switch strings.ToLower(name) {
	case "information_schema", "mysql", "performance_schema", "sys":
		return true
	}
	return false
}

// stringVal and intVal build the values of virtual rows.
func stringVal(s string) types.Value { return types.NewString(s) }
func intVal(i int64) types.Value     { return types.NewInt(i) }

// virtualTable returns the plan of an information_schema, mysql grant or cluster table, listing
// only what the session may see (infoschema.VirtualTable).
func (s *Session) virtualTable(db, name string) (*exec.Select, bool) {
	t, ok := infoschema.VirtualTable(s, db, name)
	if !ok {
		return nil, false
	}
	return tablePlan(t), true
}

// processRows returns the process list rows the session may see (SHOW PROCESSLIST).
func (s *Session) processRows() [][]types.Value { return infoschema.ProcessRows(s) }

// show runs SHOW statements.
func (s *Session) show(env *expr.Env, x *ast.ShowStmt, w proto.ResultWriter, more bool) error {
	var pl *exec.Select
	cat := s.catalog()
	like := func(name string) bool {
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
	dbOf := func() (string, error) {
		db := x.DBName
		if db == "" && x.Table != nil {
			db = x.Table.Schema.O
		}
		if db == "" {
			db = s.CurDB
		}
		if db == "" {
			return "", sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
		if _, ok := cat.DB(db); !ok && !isVirtualDB(db) {
			return "", sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", db)
		}
		return db, nil
	}
	switch x.Tp {
	case ast.ShowDatabases:
		pl = staticPlan([]vcol{stringCol("Database")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			names := append([]string{"information_schema", "mysql", "performance_schema", "sys"}, cat.DBNames()...)
			sort.Strings(names)
			for _, n := range names {
				if like(n) && s.visibleDB(n) {
					rows = append(rows, []types.Value{stringVal(n)})
				}
			}
			return rows, nil
		})
	case ast.ShowTables:
		db, err := dbOf()
		if err != nil {
			return err
		}
		cols := []vcol{stringCol("Tables_in_" + db)}
		if x.Full {
			cols = append(cols, stringCol("Table_type"))
		}
		pl = staticPlan(cols, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			all := s.allPrivileged()
			for _, t := range cat.Tables(db) {
				if !like(t.Name) || (!all && !s.visibleTable(db, t.Name)) {
					continue
				}
				r := []types.Value{stringVal(t.Name)}
				if x.Full {
					r = append(r, stringVal("BASE TABLE"))
				}
				rows = append(rows, r)
			}
			for _, v := range cat.Views(db) {
				if !like(v.Name) || (!all && !s.visibleTable(db, v.Name)) {
					continue
				}
				r := []types.Value{stringVal(v.Name)}
				if x.Full {
					r = append(r, stringVal("VIEW"))
				}
				rows = append(rows, r)
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i][0].S < rows[j][0].S })
			return rows, nil
		})
	case ast.ShowColumns:
		db, err := dbOf()
		if err != nil {
			return err
		}
		t, ok := cat.Table(db, x.Table.Name.O)
		if v, isView := cat.View(db, x.Table.Name.O); !ok && isView {
			vt, err := s.viewAsTable(v)
			if err != nil {
				return err
			}
			t, ok = vt, true
		}
		if !ok {
			return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, x.Table.Name.O)
		}
		cols := []vcol{stringCol("Field"), stringCol("Type")}
		if x.Full {
			cols = append(cols, stringCol("Collation"))
		}
		cols = append(cols, stringCol("Null"), stringCol("Key"), stringCol("Default"), stringCol("Extra"))
		if x.Full {
			cols = append(cols, stringCol("Privileges"), stringCol("Comment"))
		}
		pl = staticPlan(cols, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, c := range t.VisibleColumns() {
				if !like(c.Name) {
					continue
				}
				ci := infoschema.ColumnInfo(t, c)
				r := []types.Value{stringVal(c.Name), stringVal(c.Type.SQL())}
				if x.Full {
					r = append(r, ci.Coll)
				}
				r = append(r, stringVal(ci.Null), stringVal(ci.Key), ci.Def, stringVal(ci.Extra))
				if x.Full {
					r = append(r, stringVal("select,insert,update,references"), stringVal(c.Comment))
				}
				rows = append(rows, r)
			}
			return rows, nil
		})
	case ast.ShowIndex:
		db, err := dbOf()
		if err != nil {
			return err
		}
		t, ok := cat.Table(db, x.Table.Name.O)
		if !ok {
			return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, x.Table.Name.O)
		}
		pl = staticPlan([]vcol{stringCol("Table"), intCol("Non_unique"), stringCol("Key_name"), intCol("Seq_in_index"), stringCol("Column_name"), stringCol("Collation"), intCol("Cardinality"), intCol("Sub_part"), stringCol("Packed"), stringCol("Null"), stringCol("Index_type"), stringCol("Comment"), stringCol("Index_comment"), stringCol("Visible"), stringCol("Expression")},
			func(*expr.Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, r := range infoschema.IndexRows(t) {
					rows = append(rows, append(r, stringVal("YES"), types.Null))
				}
				return rows, nil
			})
	case ast.ShowVariables:
		pl = staticPlan([]vcol{stringCol("Variable_name"), stringCol("Value")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, n := range sysvar.Names() {
				if !like(n) {
					continue
				}
				v := s.getSysVar(sysvar.Must(n), x.GlobalScope)
				rows = append(rows, []types.Value{stringVal(n), stringVal(types.ToString(v))})
			}
			return rows, nil
		})
	case ast.ShowStatus:
		pl = staticPlan([]vcol{stringCol("Variable_name"), stringCol("Value")}, func(*expr.Env) ([][]types.Value, error) {
			st := map[string]string{}
			if s.db.cfg.Status != nil {
				st = s.db.cfg.Status()
			}
			// Per connection: MySQL shows them empty in the global scope.
			st["Ssl_version"], st["Ssl_cipher"] = "", ""
			if !x.GlobalScope {
				st["Ssl_version"], st["Ssl_cipher"] = s.SSLVersion, s.SSLCipher
			}
			names := make([]string, 0, len(st))
			for n := range st {
				names = append(names, n)
			}
			sort.Strings(names)
			var rows [][]types.Value
			for _, n := range names {
				if like(n) {
					rows = append(rows, []types.Value{stringVal(n), stringVal(st[n])})
				}
			}
			return rows, nil
		})
	case ast.ShowWarnings, ast.ShowErrors:
		warns := append([]sqlerr.Warning(nil), s.warnings...)
		pl = staticPlan([]vcol{stringCol("Level"), vcol{Name: "Code", T: types.ColType{Tp: mysql.TypeLong, Len: 4, Unsigned: true, Collation: "binary"}}, stringCol("Message")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, w := range warns {
				if x.Tp == ast.ShowErrors && w.Level != "Error" {
					continue
				}
				rows = append(rows, []types.Value{stringVal(w.Level), types.NewUint(uint64(w.Code)), stringVal(w.Message)})
			}
			return rows, nil
		})
	case ast.ShowProcessList:
		pl = staticPlan([]vcol{intCol("Id"), stringCol("User"), stringCol("Host"), stringCol("db"), stringCol("Command"), intCol("Time"), stringCol("State"), stringCol("Info")}, func(*expr.Env) ([][]types.Value, error) {
			return s.processRows(), nil
		})
	case ast.ShowCreateTable, ast.ShowCreateView:
		db, err := dbOf()
		if err != nil {
			return err
		}
		if ddl := infoschema.SystemLogTable(db, x.Table.Name.O); ddl != "" && x.Tp == ast.ShowCreateTable {
			name := strings.ToLower(x.Table.Name.O)
			pl = staticPlan([]vcol{stringCol("Table"), stringCol("Create Table")}, func(*expr.Env) ([][]types.Value, error) {
				return [][]types.Value{{stringVal(name), stringVal(ddl)}}, nil
			})
			break
		}
		if v, isView := cat.View(db, x.Table.Name.O); isView {
			pl = staticPlan([]vcol{stringCol("View"), stringCol("Create View"), stringCol("character_set_client"), stringCol("collation_connection")}, func(*expr.Env) ([][]types.Value, error) {
				return [][]types.Value{{stringVal(v.Name), stringVal(showCreateView(v)), stringVal(v.Charset), stringVal(v.Collation)}}, nil
			})
			break
		}
		t, ok := cat.Table(db, x.Table.Name.O)
		if ok && x.Tp == ast.ShowCreateView {
			return sqlerr.New(sqlerr.ErrWrongObject, "'%s.%s' is not VIEW", db, t.Name)
		}
		if !ok {
			return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, x.Table.Name.O)
		}
		ai, err := s.autoIncNext(env, t)
		if err != nil {
			return err
		}
		ddl := showCreateTable(t, ai)
		pl = staticPlan([]vcol{stringCol("Table"), stringCol("Create Table")}, func(*expr.Env) ([][]types.Value, error) {
			return [][]types.Value{{stringVal(t.Name), stringVal(ddl)}}, nil
		})
	case ast.ShowCreateDatabase:
		d, ok := cat.DB(x.DBName)
		if !ok {
			return sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", x.DBName)
		}
		pl = staticPlan([]vcol{stringCol("Database"), stringCol("Create Database")}, func(*expr.Env) ([][]types.Value, error) {
			return [][]types.Value{{stringVal(d.Name), stringVal(showCreateDatabase(d, x.IfNotExists))}}, nil
		})
	case ast.ShowEngines:
		pl = staticPlan([]vcol{stringCol("Engine"), stringCol("Support"), stringCol("Comment"), stringCol("Transactions"), stringCol("XA"), stringCol("Savepoints")}, func(*expr.Env) ([][]types.Value, error) {
			return [][]types.Value{{stringVal("InnoDB"), stringVal("DEFAULT"), stringVal("Kiln: pebble LSM under a replicated binlog"), stringVal("YES"), stringVal("NO"), stringVal("YES")}}, nil
		})
	case ast.ShowCollation:
		pl = staticPlan([]vcol{stringCol("Collation"), stringCol("Charset"), intCol("Id"), stringCol("Default"), stringCol("Compiled"), intCol("Sortlen"), stringCol("Pad_attribute")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, r := range infoschema.CollationRows() {
				if like(r[0].S) {
					rows = append(rows, r)
				}
			}
			return rows, nil
		})
	case ast.ShowCharset:
		pl = staticPlan([]vcol{stringCol("Charset"), stringCol("Description"), stringCol("Default collation"), intCol("Maxlen")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, r := range infoschema.CharsetRows() {
				if like(r[0].S) {
					rows = append(rows, r)
				}
			}
			return rows, nil
		})
	case ast.ShowTableStatus:
		db, err := dbOf()
		if err != nil {
			return err
		}
		pl = staticPlan([]vcol{stringCol("Name"), stringCol("Engine"), intCol("Version"), stringCol("Row_format"), intCol("Rows"), intCol("Avg_row_length"), intCol("Data_length"), intCol("Max_data_length"), intCol("Index_length"), intCol("Data_free"), intCol("Auto_increment"), stringCol("Create_time"), stringCol("Update_time"), stringCol("Check_time"), stringCol("Collation"), stringCol("Checksum"), stringCol("Create_options"), stringCol("Comment")},
			func(env *expr.Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, t := range cat.Tables(db) {
					if like(t.Name) && s.visibleTable(db, t.Name) {
						ai, err := s.autoIncValue(env, t)
						if err != nil {
							return nil, err
						}
						rows = append(rows, []types.Value{stringVal(t.Name), stringVal(t.Engine), intVal(10), stringVal("Dynamic"), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), ai, types.Null, types.Null, types.Null, stringVal(t.Collation), types.Null, stringVal(""), stringVal(t.Comment)})
					}
				}
				if strings.EqualFold(db, "mysql") {
					for _, n := range []string{"general_log", "slow_log"} {
						if like(n) {
							rows = append(rows, []types.Value{stringVal(n), stringVal("CSV"), intVal(10), stringVal("Dynamic"), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), types.Null, types.Null, types.Null, types.Null, stringVal("utf8mb3_general_ci"), types.Null, stringVal(""), stringVal(map[string]string{"general_log": "General log", "slow_log": "Slow log"}[n])})
						}
					}
				}
				for _, v := range cat.Views(db) {
					if like(v.Name) {
						r := []types.Value{stringVal(v.Name)}
						for range 16 {
							r = append(r, types.Null)
						}
						rows = append(rows, append(r, stringVal("VIEW")))
					}
				}
				sort.Slice(rows, func(i, j int) bool { return rows[i][0].S < rows[j][0].S })
				return rows, nil
			})
	case ast.ShowTriggers, ast.ShowEvents, ast.ShowProcedureStatus, ast.ShowFunctionStatus, ast.ShowMasterStatus, ast.ShowBinlogStatus, ast.ShowReplicaStatus:
		if x.Tp == ast.ShowTriggers || x.Tp == ast.ShowEvents {
			if _, err := dbOf(); err != nil {
				return err
			}
		}
		t, _ := infoschema.EmptyShow(x.Tp)
		pl = tablePlan(t)
	case ast.ShowCreateUser:
		var err error
		if pl, err = s.showCreateUser(x); err != nil {
			return err
		}
	case ast.ShowPlugins, ast.ShowGrants, ast.ShowPrivileges, ast.ShowOpenTables:
		pl = staticPlan([]vcol{stringCol("Name")}, func(*expr.Env) ([][]types.Value, error) { return nil, nil })
		if x.Tp == ast.ShowGrants {
			var err error
			if pl, err = s.showGrants(x); err != nil {
				return err
			}
		}
	default:
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "this SHOW statement is not supported yet")
	}
	if x.Where != nil {
		if err := s.showWhere(pl, x.Where); err != nil {
			return err
		}
	}
	return s.streamPlan(env, pl, w, more)
}

// showCreateTable renders a table definition the way MySQL 8 does.
// autoInc is the table's next AUTO_INCREMENT value (shown if above 1).
func showCreateTable(t *catalog.Table, autoInc uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", quoteIdent(t.Name))
	var lines []string
	for _, c := range t.VisibleColumns() {
		l := fmt.Sprintf("  %s %s", quoteIdent(c.Name), c.Type.SQL())
		if expr.IsStringType(c.Type) && c.Type.Collation != "binary" && c.Type.Collation != t.Collation {
			l += fmt.Sprintf(" CHARACTER SET %s COLLATE %s", c.Type.Charset, c.Type.Collation)
		}
		if c.NotNull {
			l += " NOT NULL"
		} else if c.Type.Tp == mysql.TypeTimestamp {
			l += " NULL"
		}
		switch {
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
			p := quoteIdent(t.Columns[ci].Name)
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
			lines = append(lines, fmt.Sprintf("  UNIQUE KEY %s (%s)", quoteIdent(ix.Name), strings.Join(parts, ",")))
		default:
			lines = append(lines, fmt.Sprintf("  KEY %s (%s)", quoteIdent(ix.Name), strings.Join(parts, ",")))
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

// quoteIdent quotes an identifier with backticks, doubling those inside it.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// explain shows the chosen access path of each table (tests of the planner use it).
func (s *Session) explain(env *expr.Env, x *ast.ExplainStmt, w proto.ResultWriter, more bool) error {
	if sh, ok := x.Stmt.(*ast.ShowStmt); ok {
		return s.show(env, sh, w, more)
	}
	var pl *exec.Select
	var err error
	switch st := x.Stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		pl, err = s.planQuery(st.(ast.ResultSetNode))
	case *ast.UpdateStmt:
		var tbl *catalog.Table
		var alias string
		if tbl, alias, err = s.tableRef(st.TableRefs.TableRefs); err == nil {
			pl, err = s.targetPlan(tbl, alias, st.Where, st.Order, st.Limit)
		}
	case *ast.DeleteStmt:
		var tbl *catalog.Table
		var alias string
		if tbl, alias, err = s.tableRef(st.TableRefs.TableRefs); err == nil {
			pl, err = s.targetPlan(tbl, alias, st.Where, st.Order, st.Limit)
		}
	default:
		return sqlerr.New(sqlerr.ErrNotSupportedYet, "EXPLAIN of this statement is not supported")
	}
	if err != nil {
		return err
	}
	rows := explainRows(pl, 1)
	out := staticPlan([]vcol{intCol("id"), stringCol("table"), stringCol("access"), stringCol("extra")}, func(*expr.Env) ([][]types.Value, error) { return rows, nil })
	return s.streamPlan(env, out, w, more)
}

func explainRows(pl *exec.Select, id int64) [][]types.Value {
	var rows [][]types.Value
	if pl.Union != nil {
		for i, p := range pl.Union.Parts {
			rows = append(rows, explainRows(p, id+int64(i))...)
		}
		return rows
	}
	for i, lv := range pl.Levels {
		var extra []string
		if lv.Left {
			extra = append(extra, "left join")
		}
		if lv.Filter != nil {
			extra = append(extra, "filter")
		}
		if i == 0 {
			if pl.Grouped {
				extra = append(extra, "aggregate")
			}
			if pl.SortNeeded {
				extra = append(extra, "sort")
			}
			if pl.Distinct {
				extra = append(extra, "distinct")
			}
			if pl.Limit != nil {
				extra = append(extra, "limit")
			}
		}
		acc := "derived"
		if lv.Acc != nil {
			acc = lv.Acc.Describe()
		}
		ex := strings.Join(extra, ", ")
		if ex == "" {
			ex = "-"
		}
		rows = append(rows, []types.Value{intVal(id), stringVal(lv.Alias), stringVal(acc), stringVal(ex)})
	}
	if len(pl.Levels) == 0 {
		rows = append(rows, []types.Value{intVal(id), types.Null, stringVal("no table"), stringVal("")})
	}
	return rows
}
