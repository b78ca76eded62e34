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
func (s *Session) dumpInfoSchema(name string) (*selectPlan, bool) {
	name = strings.ToUpper(name)
	if names, ok := emptyInfoSchema[name]; ok {
		cols := make([]vcol, len(names))
		for i, n := range names {
			cols[i] = vs(n)
		}
		return staticPlan(cols, func(*Env) ([][]types.Value, error) { return nil, nil }), true
	}
	cat := s.catalog()
	switch name {
	case "PARTITIONS":
		// One row per table, with NULL partition fields: what MySQL shows for a table without
		// partitions (mysqldump looks up the tablespaces of a schema's tables here).
		return staticPlan([]vcol{vs("TABLE_CATALOG"), vs("TABLE_SCHEMA"), vs("TABLE_NAME"), vs("PARTITION_NAME"), vs("SUBPARTITION_NAME"), vi("PARTITION_ORDINAL_POSITION"), vi("SUBPARTITION_ORDINAL_POSITION"), vs("PARTITION_METHOD"), vs("SUBPARTITION_METHOD"), vs("PARTITION_EXPRESSION"), vs("SUBPARTITION_EXPRESSION"), vs("PARTITION_DESCRIPTION"), vi("TABLE_ROWS"), vi("AVG_ROW_LENGTH"), vi("DATA_LENGTH"), vi("MAX_DATA_LENGTH"), vi("INDEX_LENGTH"), vi("DATA_FREE"), vs("CREATE_TIME"), vs("UPDATE_TIME"), vs("CHECK_TIME"), vi("CHECKSUM"), vs("PARTITION_COMMENT"), vs("NODEGROUP"), vs("TABLESPACE_NAME")},
			func(*Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, dbn := range cat.DBNames() {
					for _, t := range cat.Tables(dbn) {
						r := []types.Value{sv("def"), sv(t.DB), sv(t.Name)}
						for range 9 {
							r = append(r, types.Null)
						}
						r = append(r, iv(0), iv(0), iv(0), types.Null, iv(0), iv(0), types.Null, types.Null, types.Null, types.Null, sv(""), types.Null, types.Null)
						rows = append(rows, r)
					}
				}
				return rows, nil
			}), true
	case "TABLE_CONSTRAINTS":
		return staticPlan([]vcol{vs("CONSTRAINT_CATALOG"), vs("CONSTRAINT_SCHEMA"), vs("CONSTRAINT_NAME"), vs("TABLE_SCHEMA"), vs("TABLE_NAME"), vs("CONSTRAINT_TYPE"), vs("ENFORCED")},
			func(*Env) ([][]types.Value, error) {
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
							rows = append(rows, []types.Value{sv("def"), sv(t.DB), sv(ix.Name), sv(t.DB), sv(t.Name), sv(typ), sv("YES")})
						}
						rows = append(rows, fkConstraintRows(t)...)
					}
				}
				return rows, nil
			}), true
	case "KEY_COLUMN_USAGE":
		return staticPlan([]vcol{vs("CONSTRAINT_CATALOG"), vs("CONSTRAINT_SCHEMA"), vs("CONSTRAINT_NAME"), vs("TABLE_CATALOG"), vs("TABLE_SCHEMA"), vs("TABLE_NAME"), vs("COLUMN_NAME"), vi("ORDINAL_POSITION"), vi("POSITION_IN_UNIQUE_CONSTRAINT"), vs("REFERENCED_TABLE_SCHEMA"), vs("REFERENCED_TABLE_NAME"), vs("REFERENCED_COLUMN_NAME")},
			func(*Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, dbn := range cat.DBNames() {
					for _, t := range cat.Tables(dbn) {
						for _, ix := range t.Indexes {
							if (ix.Primary && t.HiddenPK) || !(ix.Primary || ix.Unique) {
								continue
							}
							for i, ci := range ix.Offsets {
								rows = append(rows, []types.Value{sv("def"), sv(t.DB), sv(ix.Name), sv("def"), sv(t.DB), sv(t.Name), sv(t.Columns[ci].Name), iv(int64(i + 1)), types.Null, types.Null, types.Null, types.Null})
							}
						}
						rows = append(rows, fkKeyUsageRows(t)...)
					}
				}
				return rows, nil
			}), true
	case "CHECK_CONSTRAINTS":
		return staticPlan([]vcol{vs("CONSTRAINT_CATALOG"), vs("CONSTRAINT_SCHEMA"), vs("CONSTRAINT_NAME"), vs("CHECK_CLAUSE")},
			func(*Env) ([][]types.Value, error) {
				var rows [][]types.Value
				for _, dbn := range cat.DBNames() {
					for _, t := range cat.Tables(dbn) {
						for _, ck := range t.Checks {
							rows = append(rows, []types.Value{sv("def"), sv(t.DB), sv(ck.Name), sv(ck.Expr)})
						}
					}
				}
				return rows, nil
			}), true
	case "VIEWS":
		return staticPlan([]vcol{vs("TABLE_CATALOG"), vs("TABLE_SCHEMA"), vs("TABLE_NAME"), vs("VIEW_DEFINITION"), vs("CHECK_OPTION"),
			vs("IS_UPDATABLE"), vs("DEFINER"), vs("SECURITY_TYPE"), vs("CHARACTER_SET_CLIENT"), vs("COLLATION_CONNECTION")},
			func(*Env) ([][]types.Value, error) { return viewRows(cat), nil }), true
	case "REFERENTIAL_CONSTRAINTS":
		return staticPlan([]vcol{vs("CONSTRAINT_CATALOG"), vs("CONSTRAINT_SCHEMA"), vs("CONSTRAINT_NAME"),
			vs("UNIQUE_CONSTRAINT_CATALOG"), vs("UNIQUE_CONSTRAINT_SCHEMA"), vs("UNIQUE_CONSTRAINT_NAME"), vs("MATCH_OPTION"),
			vs("UPDATE_RULE"), vs("DELETE_RULE"), vs("TABLE_NAME"), vs("REFERENCED_TABLE_NAME")},
			func(*Env) ([][]types.Value, error) { return referentialRows(cat), nil }), true
	case "ENGINES":
		return staticPlan([]vcol{vs("ENGINE"), vs("SUPPORT"), vs("COMMENT"), vs("TRANSACTIONS"), vs("XA"), vs("SAVEPOINTS")}, func(*Env) ([][]types.Value, error) {
			return [][]types.Value{{sv("InnoDB"), sv("DEFAULT"), sv("Kiln: pebble LSM under a replicated binlog"), sv("YES"), sv("NO"), sv("YES")}}, nil
		}), true
	case "CHARACTER_SETS":
		return staticPlan([]vcol{vs("CHARACTER_SET_NAME"), vs("DEFAULT_COLLATE_NAME"), vs("DESCRIPTION"), vi("MAXLEN")}, func(*Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, r := range charsetRows() {
				rows = append(rows, []types.Value{r[0], r[2], r[1], r[3]})
			}
			return rows, nil
		}), true
	case "COLLATIONS":
		return staticPlan([]vcol{vs("COLLATION_NAME"), vs("CHARACTER_SET_NAME"), vi("ID"), vs("IS_DEFAULT"), vs("IS_COMPILED"), vi("SORTLEN"), vs("PAD_ATTRIBUTE")}, func(*Env) ([][]types.Value, error) {
			return collationRows(), nil
		}), true
	}
	return nil, false
}

// charsetRows: Charset, Description, Default collation, Maxlen (SHOW CHARACTER SET).
func charsetRows() [][]types.Value {
	var rows [][]types.Value
	for _, cs := range []struct {
		name, desc string
		maxlen     int64
	}{{"ascii", "US ASCII", 1}, {"binary", "Binary pseudo charset", 1}, {"latin1", "cp1252 West European", 1}, {"utf8mb3", "UTF-8 Unicode", 3}, {"utf8mb4", "UTF-8 Unicode", 4}} {
		d, _ := types.DefaultCollation(cs.name)
		dn := cs.name
		if d != nil {
			dn = d.Name
		}
		rows = append(rows, []types.Value{sv(cs.name), sv(cs.desc), sv(dn), iv(cs.maxlen)})
	}
	return rows
}

// collationRows: Collation, Charset, Id, Default, Compiled, Sortlen, Pad_attribute (SHOW COLLATION).
func collationRows() [][]types.Value {
	var rows [][]types.Value
	for _, c := range allCollations() {
		def := ""
		if d, ok := types.DefaultCollation(c.Charset); ok && d.Name == c.Name {
			def = "Yes"
		}
		pad := "PAD SPACE"
		if strings.Contains(c.Name, "0900") || c.Name == "binary" {
			pad = "NO PAD"
		}
		rows = append(rows, []types.Value{sv(c.Name), sv(c.Charset), iv(int64(c.ID)), sv(def), sv("Yes"), iv(1), sv(pad)})
	}
	return rows
}

// emptyShow returns the (row-less) result of SHOW TRIGGERS, EVENTS, PROCEDURE STATUS and FUNCTION
// STATUS with MySQL 8's columns, so that SHOW ... WHERE Db = '...' finds its column; and of SHOW
// MASTER / BINARY LOG STATUS and SHOW REPLICA STATUS: Kiln has no MySQL binlog file and position
// (MySQL's answer when binary logging is off) and is no MySQL replica.
func emptyShow(tp ast.ShowStmtType) (*selectPlan, bool) {
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
		cols[i] = vs(n)
	}
	return staticPlan(cols, func(*Env) ([][]types.Value, error) { return nil, nil }), true
}

// showWhere adds the condition of SHOW ... WHERE to a SHOW plan: it reads the result's columns by
// their names (SHOW VARIABLES WHERE Variable_name = 'x', SHOW FUNCTION STATUS WHERE Db = 'd').
func (s *Session) showWhere(pl *selectPlan, where ast.ExprNode) error {
	sc := &scope{}
	for i, c := range pl.cols {
		sc.cols = append(sc.cols, scopeCol{name: c.Name, t: pl.proj[i].Type()})
	}
	e, err := (&planner{s: s}).newCompiler(sc).compile(where)
	if err != nil {
		return err
	}
	pl.where = e
	return nil
}

// autoIncNext is the next AUTO_INCREMENT value of a table as SHOW CREATE TABLE and
// information_schema.TABLES report it: the counter if this server has used it, else the largest
// value + 1, and at least the AUTO_INCREMENT table option. 0 if the table has no such column.
func (s *Session) autoIncNext(env *Env, t *catalog.Table) (uint64, error) {
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

// dataType is information_schema.COLUMNS.DATA_TYPE: the type's name without length or attributes
// ("int" for int unsigned, "varchar" for varchar(10)).
func dataType(t types.ColType) string {
	s := t.SQL()
	if i := strings.IndexAny(s, "( "); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(s)
}

// autoIncValue is the AUTO_INCREMENT column of information_schema.TABLES and SHOW TABLE STATUS: the
// next value, or NULL for a table without an AUTO_INCREMENT column.
func (s *Session) autoIncValue(env *Env, t *catalog.Table) (types.Value, error) {
	if t.AutoIncCol < 0 {
		return types.Null, nil
	}
	n, err := s.autoIncNext(env, t)
	if err != nil {
		return types.Null, err
	}
	return types.NewUint(n), nil
}
