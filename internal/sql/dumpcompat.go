package sql

// What dump and admin tools (mysqldump, mariadb-dump, GUI clients) read besides the data: the
// information_schema tables of objects Kiln does not have (tablespace files, triggers, routines,
// events, views, foreign keys) with MySQL 8's columns and no rows, the constraint tables, SHOW
// ... WHERE, and the AUTO_INCREMENT counter that SHOW CREATE TABLE reports.

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// emptyInfoSchema lists the columns of the information_schema tables that have no rows in Kiln,
// as MySQL 8 names them. A tool's query then fails only on what it asks, not on an unknown column.
var emptyInfoSchema = map[string][]string{
	"FILES": {"FILE_ID", "FILE_NAME", "FILE_TYPE", "TABLESPACE_NAME", "TABLE_CATALOG", "TABLE_SCHEMA",
		"TABLE_NAME", "LOGFILE_GROUP_NAME", "LOGFILE_GROUP_NUMBER", "ENGINE", "FULLTEXT_KEYS", "DELETED_ROWS",
		"UPDATE_COUNT", "FREE_EXTENTS", "TOTAL_EXTENTS", "EXTENT_SIZE", "INITIAL_SIZE", "MAXIMUM_SIZE",
		"AUTOEXTEND_SIZE", "CREATION_TIME", "LAST_UPDATE_TIME", "LAST_ACCESS_TIME", "RECOVER_TIME",
		"TRANSACTION_COUNTER", "VERSION", "ROW_FORMAT", "TABLE_ROWS", "AVG_ROW_LENGTH", "DATA_LENGTH",
		"MAX_DATA_LENGTH", "INDEX_LENGTH", "DATA_FREE", "CREATE_TIME", "UPDATE_TIME", "CHECK_TIME",
		"CHECKSUM", "STATUS", "EXTRA"},
	"TRIGGERS": {"TRIGGER_CATALOG", "TRIGGER_SCHEMA", "TRIGGER_NAME", "EVENT_MANIPULATION",
		"EVENT_OBJECT_CATALOG", "EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE", "ACTION_ORDER",
		"ACTION_CONDITION", "ACTION_STATEMENT", "ACTION_ORIENTATION", "ACTION_TIMING",
		"ACTION_REFERENCE_OLD_TABLE", "ACTION_REFERENCE_NEW_TABLE", "ACTION_REFERENCE_OLD_ROW",
		"ACTION_REFERENCE_NEW_ROW", "CREATED", "SQL_MODE", "DEFINER", "CHARACTER_SET_CLIENT",
		"COLLATION_CONNECTION", "DATABASE_COLLATION"},
	"ROUTINES": {"SPECIFIC_NAME", "ROUTINE_CATALOG", "ROUTINE_SCHEMA", "ROUTINE_NAME", "ROUTINE_TYPE",
		"DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH", "CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION",
		"NUMERIC_SCALE", "DATETIME_PRECISION", "CHARACTER_SET_NAME", "COLLATION_NAME", "DTD_IDENTIFIER",
		"ROUTINE_BODY", "ROUTINE_DEFINITION", "EXTERNAL_NAME", "EXTERNAL_LANGUAGE", "PARAMETER_STYLE",
		"IS_DETERMINISTIC", "SQL_DATA_ACCESS", "SQL_PATH", "SECURITY_TYPE", "CREATED", "LAST_ALTERED",
		"SQL_MODE", "ROUTINE_COMMENT", "DEFINER", "CHARACTER_SET_CLIENT", "COLLATION_CONNECTION",
		"DATABASE_COLLATION"},
	"PARAMETERS": {"SPECIFIC_CATALOG", "SPECIFIC_SCHEMA", "SPECIFIC_NAME", "ORDINAL_POSITION",
		"PARAMETER_MODE", "PARAMETER_NAME", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH",
		"CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION", "NUMERIC_SCALE", "DATETIME_PRECISION",
		"CHARACTER_SET_NAME", "COLLATION_NAME", "DTD_IDENTIFIER", "ROUTINE_TYPE"},
	"EVENTS": {"EVENT_CATALOG", "EVENT_SCHEMA", "EVENT_NAME", "DEFINER", "TIME_ZONE", "EVENT_BODY",
		"EVENT_DEFINITION", "EVENT_TYPE", "EXECUTE_AT", "INTERVAL_VALUE", "INTERVAL_FIELD", "SQL_MODE",
		"STARTS", "ENDS", "STATUS", "ON_COMPLETION", "CREATED", "LAST_ALTERED", "LAST_EXECUTED",
		"EVENT_COMMENT", "ORIGINATOR", "CHARACTER_SET_CLIENT", "COLLATION_CONNECTION", "DATABASE_COLLATION"},
	"PLUGINS": {"PLUGIN_NAME", "PLUGIN_VERSION", "PLUGIN_STATUS", "PLUGIN_TYPE", "PLUGIN_TYPE_VERSION",
		"PLUGIN_LIBRARY", "PLUGIN_LIBRARY_VERSION", "PLUGIN_AUTHOR", "PLUGIN_DESCRIPTION", "PLUGIN_LICENSE",
		"LOAD_OPTION"},
	"USER_PRIVILEGES":   {"GRANTEE", "TABLE_CATALOG", "PRIVILEGE_TYPE", "IS_GRANTABLE"},
	"COLUMN_STATISTICS": {"SCHEMA_NAME", "TABLE_NAME", "COLUMN_NAME", "HISTOGRAM"},
}

// dumpInfoSchema returns the plans of the information_schema tables of this file.
func (s *Session) dumpInfoSchema(name string) (*exec.Select, bool) {
	name = strings.ToUpper(name)
	if names, ok := emptyInfoSchema[name]; ok {
		cols := make([]vcol, len(names))
		for i, n := range names {
			cols[i] = stringCol(n)
		}
		return staticPlan(cols, func(*expr.Env) ([][]types.Value, error) { return nil, nil }), true
	}
	cat := s.catalog()
	switch name {
	case "PARTITIONS":
		// One row per table, with NULL partition fields: what MySQL shows for a table without
		// partitions (mysqldump looks up the tablespaces of a schema's tables here).
		return staticPlan([]vcol{stringCol("TABLE_CATALOG"), stringCol("TABLE_SCHEMA"), stringCol("TABLE_NAME"), stringCol("PARTITION_NAME"), stringCol("SUBPARTITION_NAME"), intCol("PARTITION_ORDINAL_POSITION"), intCol("SUBPARTITION_ORDINAL_POSITION"), stringCol("PARTITION_METHOD"), stringCol("SUBPARTITION_METHOD"), stringCol("PARTITION_EXPRESSION"), stringCol("SUBPARTITION_EXPRESSION"), stringCol("PARTITION_DESCRIPTION"), intCol("TABLE_ROWS"), intCol("AVG_ROW_LENGTH"), intCol("DATA_LENGTH"), intCol("MAX_DATA_LENGTH"), intCol("INDEX_LENGTH"), intCol("DATA_FREE"), stringCol("CREATE_TIME"), stringCol("UPDATE_TIME"), stringCol("CHECK_TIME"), intCol("CHECKSUM"), stringCol("PARTITION_COMMENT"), stringCol("NODEGROUP"), stringCol("TABLESPACE_NAME")},
			func(*expr.Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, dbn := range cat.DBNames() {
					for _, t := range cat.Tables(dbn) {
						r := []types.Value{stringVal("def"), stringVal(t.DB), stringVal(t.Name)}
						for range 9 {
							r = append(r, types.Null)
						}
						r = append(r, intVal(0), intVal(0), intVal(0), types.Null, intVal(0), intVal(0), types.Null, types.Null, types.Null, types.Null, stringVal(""), types.Null, types.Null)
						rows = append(rows, r)
					}
				}
				return rows, nil
			}), true
	case "TABLE_CONSTRAINTS":
		return staticPlan([]vcol{stringCol("CONSTRAINT_CATALOG"), stringCol("CONSTRAINT_SCHEMA"), stringCol("CONSTRAINT_NAME"), stringCol("TABLE_SCHEMA"), stringCol("TABLE_NAME"), stringCol("CONSTRAINT_TYPE"), stringCol("ENFORCED")},
			func(*expr.Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, dbn := range cat.DBNames() {
					for _, t := range cat.Tables(dbn) {
						for _, ix := range t.Indexes {
							typ := "UNIQUE"
							switch {
							case ix.Primary && t.HiddenPK:
								continue
							case ix.Primary:
								typ = "PRIMARY KEY"
							case !ix.Unique:
								continue
							}
							rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(ix.Name), stringVal(t.DB), stringVal(t.Name), stringVal(typ), stringVal("YES")})
						}
						rows = append(rows, infoschema.FKConstraintRows(t)...)
					}
				}
				return rows, nil
			}), true
	case "KEY_COLUMN_USAGE":
		return staticPlan([]vcol{stringCol("CONSTRAINT_CATALOG"), stringCol("CONSTRAINT_SCHEMA"), stringCol("CONSTRAINT_NAME"), stringCol("TABLE_CATALOG"), stringCol("TABLE_SCHEMA"), stringCol("TABLE_NAME"), stringCol("COLUMN_NAME"), intCol("ORDINAL_POSITION"), intCol("POSITION_IN_UNIQUE_CONSTRAINT"), stringCol("REFERENCED_TABLE_SCHEMA"), stringCol("REFERENCED_TABLE_NAME"), stringCol("REFERENCED_COLUMN_NAME")},
			func(*expr.Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, dbn := range cat.DBNames() {
					for _, t := range cat.Tables(dbn) {
						for _, ix := range t.Indexes {
							if (ix.Primary && t.HiddenPK) || !(ix.Primary || ix.Unique) {
								continue
							}
							for i, ci := range ix.Offsets {
								rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(ix.Name), stringVal("def"), stringVal(t.DB), stringVal(t.Name), stringVal(t.Columns[ci].Name), intVal(int64(i + 1)), types.Null, types.Null, types.Null, types.Null})
							}
						}
						rows = append(rows, infoschema.FKKeyUsageRows(t)...)
					}
				}
				return rows, nil
			}), true
	case "CHECK_CONSTRAINTS":
		return staticPlan([]vcol{stringCol("CONSTRAINT_CATALOG"), stringCol("CONSTRAINT_SCHEMA"), stringCol("CONSTRAINT_NAME"), stringCol("CHECK_CLAUSE")},
			func(*expr.Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, dbn := range cat.DBNames() {
					for _, t := range cat.Tables(dbn) {
						for _, ck := range t.Checks {
							rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(ck.Name), stringVal(ck.Expr)})
						}
					}
				}
				return rows, nil
			}), true
	case "VIEWS":
		return staticPlan([]vcol{stringCol("TABLE_CATALOG"), stringCol("TABLE_SCHEMA"), stringCol("TABLE_NAME"), stringCol("VIEW_DEFINITION"), stringCol("CHECK_OPTION"),
			stringCol("IS_UPDATABLE"), stringCol("DEFINER"), stringCol("SECURITY_TYPE"), stringCol("CHARACTER_SET_CLIENT"), stringCol("COLLATION_CONNECTION")},
			func(*expr.Env) ([][]types.Value, error) { return infoschema.ViewRows(cat), nil }), true
	case "REFERENTIAL_CONSTRAINTS":
		return staticPlan([]vcol{stringCol("CONSTRAINT_CATALOG"), stringCol("CONSTRAINT_SCHEMA"), stringCol("CONSTRAINT_NAME"),
			stringCol("UNIQUE_CONSTRAINT_CATALOG"), stringCol("UNIQUE_CONSTRAINT_SCHEMA"), stringCol("UNIQUE_CONSTRAINT_NAME"), stringCol("MATCH_OPTION"),
			stringCol("UPDATE_RULE"), stringCol("DELETE_RULE"), stringCol("TABLE_NAME"), stringCol("REFERENCED_TABLE_NAME")},
			func(*expr.Env) ([][]types.Value, error) { return referentialRows(cat), nil }), true
	case "ENGINES":
		return staticPlan([]vcol{stringCol("ENGINE"), stringCol("SUPPORT"), stringCol("COMMENT"), stringCol("TRANSACTIONS"), stringCol("XA"), stringCol("SAVEPOINTS")}, func(*expr.Env) ([][]types.Value, error) {
			return [][]types.Value{{stringVal("InnoDB"), stringVal("DEFAULT"), stringVal("Kiln: pebble LSM under a replicated binlog"), stringVal("YES"), stringVal("NO"), stringVal("YES")}}, nil
		}), true
	case "CHARACTER_SETS":
		return staticPlan([]vcol{stringCol("CHARACTER_SET_NAME"), stringCol("DEFAULT_COLLATE_NAME"), stringCol("DESCRIPTION"), intCol("MAXLEN")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, r := range infoschema.CharsetRows() {
				rows = append(rows, []types.Value{r[0], r[2], r[1], r[3]})
			}
			return rows, nil
		}), true
	case "COLLATIONS":
		return staticPlan([]vcol{stringCol("COLLATION_NAME"), stringCol("CHARACTER_SET_NAME"), intCol("ID"), stringCol("IS_DEFAULT"), stringCol("IS_COMPILED"), intCol("SORTLEN"), stringCol("PAD_ATTRIBUTE")}, func(*expr.Env) ([][]types.Value, error) {
			return infoschema.CollationRows(), nil
		}), true
	}
	return nil, false
}

// emptyShow returns the (row-less) result of SHOW TRIGGERS, EVENTS, PROCEDURE STATUS and FUNCTION
// STATUS with MySQL 8's columns, so that SHOW ... WHERE Db = '...' finds its column; and of SHOW
// MASTER / BINARY LOG STATUS and SHOW REPLICA STATUS: Kiln has no MySQL binlog file and position
// (MySQL's answer when binary logging is off) and is no MySQL replica.
func emptyShow(tp ast.ShowStmtType) (*exec.Select, bool) {
	var names []string
	switch tp {
	case ast.ShowTriggers:
		names = []string{"Trigger", "Event", "Table", "Statement", "Timing", "Created", "sql_mode", "Definer", "character_set_client", "collation_connection", "Database Collation"}
	case ast.ShowEvents:
		names = []string{"Db", "Name", "Definer", "Time zone", "Type", "Execute at", "Interval value", "Interval field", "Starts", "Ends", "Status", "Originator", "character_set_client", "collation_connection", "Database Collation"}
	case ast.ShowProcedureStatus, ast.ShowFunctionStatus:
		names = []string{"Db", "Name", "Type", "Definer", "Modified", "Created", "Security_type", "Comment", "character_set_client", "collation_connection", "Database Collation"}
	case ast.ShowMasterStatus, ast.ShowBinlogStatus:
		names = []string{"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set"}
	case ast.ShowReplicaStatus:
		names = []string{"Replica_IO_State", "Source_Host", "Source_User", "Source_Port", "Connect_Retry",
			"Source_Log_File", "Read_Source_Log_Pos", "Relay_Log_File", "Relay_Log_Pos", "Relay_Source_Log_File",
			"Replica_IO_Running", "Replica_SQL_Running", "Replicate_Do_DB", "Replicate_Ignore_DB",
			"Replicate_Do_Table", "Replicate_Ignore_Table", "Replicate_Wild_Do_Table",
			"Replicate_Wild_Ignore_Table", "Last_Errno", "Last_Error", "Skip_Counter", "Exec_Source_Log_Pos",
			"Relay_Log_Space", "Until_Condition", "Until_Log_File", "Until_Log_Pos", "Source_SSL_Allowed",
			"Source_SSL_CA_File", "Source_SSL_CA_Path", "Source_SSL_Cert", "Source_SSL_Cipher", "Source_SSL_Key",
			"Seconds_Behind_Source", "Source_SSL_Verify_Server_Cert", "Last_IO_Errno", "Last_IO_Error",
			"Last_SQL_Errno", "Last_SQL_Error", "Replicate_Ignore_Server_Ids", "Source_Server_Id", "Source_UUID",
			"Source_Info_File", "SQL_Delay", "SQL_Remaining_Delay", "Replica_SQL_Running_State",
			"Source_Retry_Count", "Source_Bind", "Last_IO_Error_Timestamp", "Last_SQL_Error_Timestamp",
			"Source_SSL_Crl", "Source_SSL_Crlpath", "Retrieved_Gtid_Set", "Executed_Gtid_Set", "Auto_Position",
			"Replicate_Rewrite_DB", "Channel_Name", "Source_TLS_Version", "Source_public_key_path",
			"Get_Source_public_key", "Network_Namespace"}
	default:
		return nil, false
	}
	cols := make([]vcol, len(names))
	for i, n := range names {
		cols[i] = stringCol(n)
	}
	return staticPlan(cols, func(*expr.Env) ([][]types.Value, error) { return nil, nil }), true
}

// showWhere adds the condition of SHOW ... WHERE to a SHOW plan: it reads the result's columns by
// their names (SHOW VARIABLES WHERE Variable_name = 'x', SHOW FUNCTION STATUS WHERE Db = 'd').
func (s *Session) showWhere(pl *exec.Select, where ast.ExprNode) error {
	sc := &plan.Scope{}
	for i, c := range pl.Cols {
		sc.Cols = append(sc.Cols, plan.ScopeCol{Name: c.Name, T: pl.Proj[i].Type()})
	}
	e, err := (&plan.Planner{Ctx: s.planContext()}).NewCompiler(sc).Compile(where)
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

// showCreateDatabase renders SHOW CREATE DATABASE [IF NOT EXISTS] as MySQL 8 does.
func showCreateDatabase(d *catalog.Database, ifNotExists bool) string {
	ine := ""
	if ifNotExists {
		ine = "/*!32312 IF NOT EXISTS*/ "
	}
	return fmt.Sprintf("CREATE DATABASE %s%s /*!40100 DEFAULT CHARACTER SET %s COLLATE %s */ /*!80016 DEFAULT ENCRYPTION='N' */", ine, quoteIdent(d.Name), d.Charset, d.Collation)
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

// referentialRows returns REFERENTIAL_CONSTRAINTS rows for every foreign key in cat. It stays in the
// facade (not sql/infoschema) because the parent's unique index is found by exec's resolver (exec.ResolveParent).
func referentialRows(cat *catalog.Catalog) [][]types.Value {
	var rows [][]types.Value
	for _, dbn := range cat.DBNames() {
		for _, t := range cat.Tables(dbn) {
			for _, fk := range t.ForeignKeys {
				uniq := types.Null
				if p, pcols, ok := exec.ResolveParent(cat, fk); ok {
					if ix := exec.PrefixIndex(p, pcols); ix != nil && ix.Unique {
						uniq = stringVal(ix.Name)
					}
				}
				rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(fk.Name), stringVal("def"), stringVal(fk.RefDB), uniq, stringVal("NONE"), stringVal(infoschema.RefRule(fk.OnUpdate)), stringVal(infoschema.RefRule(fk.OnDelete)), stringVal(t.Name), stringVal(fk.RefTable)})
			}
		}
	}
	return rows
}
