package infoschema

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// The information_schema tables: their columns (MySQL 8's names and order) and row sources. The
// facade turns a Table into a plan (a static *exec.Select) after the user's privileges have
// filtered it (filterListing, privtables.go); the catalog snapshot a table lists is taken when it is looked up,
// so one statement reads one catalog.

// Col declares a column of a virtual result (SHOW, information_schema).
type Col struct {
	Name string
	T    types.ColType
}

// StringCol and IntCol declare a string (VARCHAR) or integer (BIGINT) column of a virtual result.
func StringCol(name string) Col { return Col{name, expr.TString} }
func IntCol(name string) Col    { return Col{name, expr.TInt} }

// Table is a virtual table: its columns and the function that produces its rows when the
// statement runs (rows are computed per execution, never cached with a plan).
type Table struct {
	Cols []Col
	Rows func(env *expr.Env) ([][]types.Value, error)
}

func table(cols []Col, rows func(env *expr.Env) ([][]types.Value, error)) Table {
	return Table{Cols: cols, Rows: rows}
}

// Session is what the virtual tables need of the session that reads them; the facade's
// *sql.Session implements it. It is a consumer-side interface so that infoschema never imports
// internal/sql.
type Session interface {
	// Catalog is the catalog snapshot the statement reads.
	Catalog() *catalog.Catalog
	// AutoIncrementValue is the next AUTO_INCREMENT value of t (NULL without such a column); it
	// may read the table, hence env.
	AutoIncrementValue(env *expr.Env, t *catalog.Table) (types.Value, error)
	// ViewAsTable describes a view as a table without indexes; it plans the view's SELECT, which
	// only the facade can do, and fails for an invalid view.
	ViewAsTable(v *catalog.View) (*catalog.Table, error)
	// Processes lists the server's connections (nil on a server without connections).
	Processes() []Process
	// CanSeeAllProcesses reports the PROCESS privilege; without it a user sees only their own
	// threads.
	CanSeeAllProcesses() bool
	// SessionUser is the user name the client logged in with (PROCESSLIST's USER).
	SessionUser() string
	// Account is the account the session authenticated as (the privilege tables list only its
	// rows unless AccountGrants gives it SELECT on the mysql schema).
	Account() (user, host string)
	// AccountGrants is that account's privileges (an empty account if it has been dropped).
	AccountGrants() *catalog.Account
	// AllPrivileged reports an account every check passes (root): listings are not filtered.
	AllPrivileged() bool
	// VisibleDB and VisibleTable report whether listings show a schema or a table, as SHOW
	// DATABASES and SHOW TABLES decide.
	VisibleDB(db string) bool
	VisibleTable(db, table string) bool
	// ClusterMembers lists the cluster's members (nil on a server without a cluster).
	ClusterMembers() []ClusterMember
	// ServerVersion is the version the server reports (replication_group_members.MEMBER_VERSION).
	ServerVersion() string

	// What SHOW reads besides the catalog:

	// CurrentDB is the session's default database ("" if none).
	CurrentDB() string
	// SysVar is a system variable's value in the session's (global=false) or the global scope.
	SysVar(v *sysvar.Var, global bool) types.Value
	// StatusVariables are SHOW [GLOBAL] STATUS's variables by name (a new map the caller owns).
	StatusVariables(global bool) map[string]string
	// Warnings are the diagnostics of the last statement (a copy).
	Warnings() []sqlerr.Warning
	// AutoIncrementNext is t's next AUTO_INCREMENT value as SHOW CREATE TABLE reports it (0
	// without such a column).
	AutoIncrementNext(env *expr.Env, t *catalog.Table) (uint64, error)
}

// VirtualTable returns the table db.name of information_schema, mysql's grant tables or
// performance_schema's cluster table, listing only what the session may see. False if it is none
// of those (the caller then looks for a base table or reports it missing).
func VirtualTable(s Session, db, name string) (Table, bool) {
	t, ok := virtualTableAll(s, db, name)
	if ok && strings.EqualFold(db, "information_schema") {
		t = filterListing(s, name, t)
	}
	return t, ok
}

func virtualTableAll(s Session, db, name string) (Table, bool) {
	if t, ok := clusterTable(s, db, name); ok {
		return t, true
	}
	switch strings.ToLower(db) {
	case "information_schema":
		if t, ok := privTable(s, name); ok {
			return t, true
		}
		return InformationSchema(s, name)
	case "mysql":
		return grantTable(s, name)
	}
	return Table{}, false
}

// Process is one connection as SHOW PROCESSLIST and information_schema.PROCESSLIST show it.
type Process struct {
	ID      uint32
	User    string
	Host    string
	DB      string
	Command string
	Time    int64
	State   string
	Info    string
}

// ProcessRows returns the process list rows the session may see: all with PROCESS, else only the
// user's own threads (as MySQL).
func ProcessRows(s Session) [][]types.Value {
	var rows [][]types.Value
	all := s.CanSeeAllProcesses()
	for _, p := range s.Processes() {
		if !all && p.User != s.SessionUser() {
			continue
		}
		db := types.Null
		if p.DB != "" {
			db = stringVal(p.DB)
		}
		info := types.Null
		if p.Info != "" {
			info = stringVal(p.Info)
		}
		rows = append(rows, []types.Value{types.NewInt(int64(p.ID)), stringVal(p.User), stringVal(p.Host), db, stringVal(p.Command), intVal(p.Time), stringVal(p.State), info})
	}
	return rows
}

// viewColumnRows returns the COLUMNS rows of a view described as a table: no default, key or
// extra, as MySQL shows a view's columns.
func viewColumnRows(vt *catalog.Table) [][]types.Value {
	var rows [][]types.Value
	for i, c := range vt.Columns {
		ct := c.Type
		null := "YES"
		if c.NotNull {
			null = "NO"
		}
		cs, coll := types.Null, types.Null
		if expr.IsStringType(ct) && ct.Collation != "binary" {
			cs, coll = stringVal(ct.Charset), stringVal(ct.Collation)
		}
		l := ColLengths(ct)
		rows = append(rows, []types.Value{stringVal("def"), stringVal(vt.DB), stringVal(vt.Name), stringVal(c.Name), intVal(int64(i + 1)), types.Null, stringVal(null), stringVal(DataType(ct)), l[0], l[1], l[2], l[3], l[4], cs, coll, stringVal(ct.SQL()), stringVal(""), stringVal(""), stringVal("select,insert,update,references"), stringVal(""), stringVal("")})
	}
	return rows
}

// InformationSchema returns information_schema.name (any case) with every row, unfiltered
// (VirtualTable filters). False if Kiln has no such table here (the privilege tables are
// privTable's, the cluster table clusterTable's).
func InformationSchema(s Session, name string) (Table, bool) {
	name = strings.ToUpper(name)
	if names, ok := emptyInfoSchema[name]; ok {
		cols := make([]Col, len(names))
		for i, n := range names {
			cols[i] = StringCol(n)
		}
		return table(cols, func(*expr.Env) ([][]types.Value, error) { return nil, nil }), true
	}
	if build, ok := infoSchemaTables[name]; ok {
		return build(s, s.Catalog()), true
	}
	return Table{}, false
}

// infoSchemaTables are the information_schema tables with rows, by upper-case name. Each lists
// the catalog snapshot it is given (taken at lookup) when its rows are computed.
var infoSchemaTables = map[string]func(s Session, cat *catalog.Catalog) Table{
	"SCHEMATA":                isSchemata,
	"TABLES":                  isTables,
	"COLUMNS":                 isColumns,
	"STATISTICS":              isStatistics,
	"PROCESSLIST":             isProcesslist,
	"PARTITIONS":              isPartitions,
	"TABLE_CONSTRAINTS":       isTableConstraints,
	"KEY_COLUMN_USAGE":        isKeyColumnUsage,
	"CHECK_CONSTRAINTS":       isCheckConstraints,
	"VIEWS":                   isViews,
	"REFERENTIAL_CONSTRAINTS": isReferentialConstraints,
	"ENGINES":                 isEngines,
	"CHARACTER_SETS":          isCharacterSets,
	"COLLATIONS":              isCollations,
}

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

type ColInfo struct {
	Def           types.Value
	Null          string
	Key           string
	Extra         string
	Charset, Coll types.Value
}

func ColumnInfo(t *catalog.Table, c *catalog.Column) ColInfo {
	r := ColInfo{Def: types.Null, Null: "YES", Charset: types.Null, Coll: types.Null}
	if c.NotNull {
		r.Null = "NO"
	}
	if c.HasDefault {
		if c.DefaultNow {
			r.Def = stringVal("CURRENT_TIMESTAMP")
		} else if c.DefaultExpr != "" {
			r.Def = stringVal(c.DefaultExpr)
		} else if !c.Default.IsNull() {
			r.Def = stringVal(types.ToString(c.Default))
		}
	}
	for _, ix := range t.Indexes {
		if len(ix.Offsets) == 0 || t.Columns[ix.Offsets[0]] != c {
			continue
		}
		switch {
		case ix.Primary && !t.HiddenPK:
			r.Key = "PRI"
		case ix.Unique && len(ix.Offsets) == 1 && r.Key == "":
			r.Key = "UNI"
		case r.Key == "":
			r.Key = "MUL"
		}
	}
	if c.AutoInc {
		r.Extra = "auto_increment"
	}
	if c.DefaultNow || c.DefaultExpr != "" {
		r.Extra = "DEFAULT_GENERATED"
		if c.OnUpdateNow {
			r.Extra += " on update CURRENT_TIMESTAMP"
		}
	}
	if c.GenExpr != "" {
		r.Extra = "VIRTUAL GENERATED"
		if c.GenStored {
			r.Extra = "STORED GENERATED"
		}
	}
	if expr.IsStringType(c.Type) && c.Type.Collation != "binary" {
		r.Charset, r.Coll = stringVal(c.Type.Charset), stringVal(c.Type.Collation)
	}
	return r
}

// EmptyShow returns the (row-less) result of SHOW TRIGGERS, EVENTS, PROCEDURE STATUS and FUNCTION
// STATUS with MySQL 8's columns, so that SHOW ... WHERE Db = '...' finds its column; and of SHOW
// MASTER / BINARY LOG STATUS and SHOW REPLICA STATUS: Kiln has no MySQL binlog file and position
// (MySQL's answer when binary logging is off) and is no MySQL replica.
func EmptyShow(tp ast.ShowStmtType) (Table, bool) {
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
		return Table{}, false
	}
	cols := make([]Col, len(names))
	for i, n := range names {
		cols[i] = StringCol(n)
	}
	return table(cols, func(*expr.Env) ([][]types.Value, error) { return nil, nil }), true
}

// referentialRows returns REFERENTIAL_CONSTRAINTS rows for every foreign key in cat; the parent's
// unique index is found by exec's resolver (exec.ResolveParent), as the FK checks find it.
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
				rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(fk.Name), stringVal("def"), stringVal(fk.RefDB), uniq, stringVal("NONE"), stringVal(RefRule(fk.OnUpdate)), stringVal(RefRule(fk.OnDelete)), stringVal(t.Name), stringVal(fk.RefTable)})
			}
		}
	}
	return rows
}

// isSchemata is information_schema.SCHEMATA: the schemas, the virtual ones first.
func isSchemata(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("CATALOG_NAME"), StringCol("SCHEMA_NAME"), StringCol("DEFAULT_CHARACTER_SET_NAME"), StringCol("DEFAULT_COLLATION_NAME"), StringCol("SQL_PATH"), StringCol("DEFAULT_ENCRYPTION")},
		func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, n := range append([]string{"information_schema", "mysql", "performance_schema", "sys"}, cat.DBNames()...) {
				cs, coll := "utf8mb4", "utf8mb4_0900_ai_ci"
				if d, ok := cat.DB(n); ok {
					cs, coll = d.Charset, d.Collation
				}
				rows = append(rows, []types.Value{stringVal("def"), stringVal(n), stringVal(cs), stringVal(coll), types.Null, stringVal("NO")})
			}
			return rows, nil
		})
}

// isTables is information_schema.TABLES: base tables and views.
func isTables(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), StringCol("TABLE_TYPE"), StringCol("ENGINE"), IntCol("VERSION"), StringCol("ROW_FORMAT"), IntCol("TABLE_ROWS"), IntCol("AVG_ROW_LENGTH"), IntCol("DATA_LENGTH"), IntCol("MAX_DATA_LENGTH"), IntCol("INDEX_LENGTH"), IntCol("DATA_FREE"), IntCol("AUTO_INCREMENT"), StringCol("CREATE_TIME"), StringCol("UPDATE_TIME"), StringCol("CHECK_TIME"), StringCol("TABLE_COLLATION"), IntCol("CHECKSUM"), StringCol("CREATE_OPTIONS"), StringCol("TABLE_COMMENT")},
		func(env *expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, dbn := range cat.DBNames() {
				for _, t := range cat.Tables(dbn) {
					ai, err := s.AutoIncrementValue(env, t)
					if err != nil {
						return nil, err
					}
					rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(t.Name), stringVal("BASE TABLE"), stringVal(t.Engine), intVal(10), stringVal("Dynamic"), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), intVal(0), ai, types.Null, types.Null, types.Null, stringVal(t.Collation), types.Null, stringVal(""), stringVal(t.Comment)})
				}
				rows = append(rows, ViewTableRows(cat, dbn)...)
			}
			return rows, nil
		})
}

// isColumns is information_schema.COLUMNS: the columns of tables and of views (a view's from
// planning it; an invalid view lists none).
func isColumns(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), StringCol("COLUMN_NAME"), IntCol("ORDINAL_POSITION"), StringCol("COLUMN_DEFAULT"), StringCol("IS_NULLABLE"), StringCol("DATA_TYPE"), IntCol("CHARACTER_MAXIMUM_LENGTH"), IntCol("CHARACTER_OCTET_LENGTH"), IntCol("NUMERIC_PRECISION"), IntCol("NUMERIC_SCALE"), IntCol("DATETIME_PRECISION"), StringCol("CHARACTER_SET_NAME"), StringCol("COLLATION_NAME"), StringCol("COLUMN_TYPE"), StringCol("COLUMN_KEY"), StringCol("EXTRA"), StringCol("PRIVILEGES"), StringCol("COLUMN_COMMENT"), StringCol("GENERATION_EXPRESSION")},
		func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, dbn := range cat.DBNames() {
				for _, t := range cat.Tables(dbn) {
					for i, c := range t.VisibleColumns() {
						r := ColumnInfo(t, c)
						l := ColLengths(c.Type)
						rows = append(rows, []types.Value{stringVal("def"), stringVal(t.DB), stringVal(t.Name), stringVal(c.Name), intVal(int64(i + 1)), r.Def, stringVal(r.Null), stringVal(DataType(c.Type)), l[0], l[1], l[2], l[3], l[4], r.Charset, r.Coll, stringVal(c.Type.SQL()), stringVal(r.Key), stringVal(r.Extra), stringVal("select,insert,update,references"), stringVal(c.Comment), stringVal(c.GenExpr)})
					}
				}
				for _, v := range cat.Views(dbn) {
					vt, err := s.ViewAsTable(v)
					if err != nil {
						continue // an invalid view lists no columns, as MySQL (with a warning)
					}
					rows = append(rows, viewColumnRows(vt)...)
				}
			}
			return rows, nil
		})
}

// isStatistics is information_schema.STATISTICS: one row per index column.
func isStatistics(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), IntCol("NON_UNIQUE"), StringCol("INDEX_SCHEMA"), StringCol("INDEX_NAME"), IntCol("SEQ_IN_INDEX"), StringCol("COLUMN_NAME"), StringCol("COLLATION"), IntCol("CARDINALITY"), IntCol("SUB_PART"), StringCol("PACKED"), StringCol("NULLABLE"), StringCol("INDEX_TYPE"), StringCol("COMMENT"), StringCol("INDEX_COMMENT"), StringCol("IS_VISIBLE"), StringCol("EXPRESSION")},
		func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, dbn := range cat.DBNames() {
				for _, t := range cat.Tables(dbn) {
					for _, r := range IndexRows(t) {
						rows = append(rows, append([]types.Value{stringVal("def"), stringVal(t.DB)}, r[0], r[1], stringVal(t.DB), r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], stringVal("YES"), types.Null))
					}
				}
			}
			return rows, nil
		})
}

// isProcesslist is information_schema.PROCESSLIST: the threads the user may see.
func isProcesslist(s Session, cat *catalog.Catalog) Table {
	return table([]Col{IntCol("ID"), StringCol("USER"), StringCol("HOST"), StringCol("DB"), StringCol("COMMAND"), IntCol("TIME"), StringCol("STATE"), StringCol("INFO")}, func(*expr.Env) ([][]types.Value, error) {
		return ProcessRows(s), nil
	})
}

// isPartitions is information_schema.PARTITIONS: one row per table, with NULL partition fields:
// what MySQL shows for a table without partitions (mysqldump looks up the tablespaces of a schema's
// tables here).
func isPartitions(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), StringCol("PARTITION_NAME"), StringCol("SUBPARTITION_NAME"), IntCol("PARTITION_ORDINAL_POSITION"), IntCol("SUBPARTITION_ORDINAL_POSITION"), StringCol("PARTITION_METHOD"), StringCol("SUBPARTITION_METHOD"), StringCol("PARTITION_EXPRESSION"), StringCol("SUBPARTITION_EXPRESSION"), StringCol("PARTITION_DESCRIPTION"), IntCol("TABLE_ROWS"), IntCol("AVG_ROW_LENGTH"), IntCol("DATA_LENGTH"), IntCol("MAX_DATA_LENGTH"), IntCol("INDEX_LENGTH"), IntCol("DATA_FREE"), StringCol("CREATE_TIME"), StringCol("UPDATE_TIME"), StringCol("CHECK_TIME"), IntCol("CHECKSUM"), StringCol("PARTITION_COMMENT"), StringCol("NODEGROUP"), StringCol("TABLESPACE_NAME")},
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
		})
}

// isTableConstraints is information_schema.TABLE_CONSTRAINTS: PRIMARY KEY, UNIQUE, FOREIGN KEY and
// CHECK constraints.
func isTableConstraints(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("CONSTRAINT_CATALOG"), StringCol("CONSTRAINT_SCHEMA"), StringCol("CONSTRAINT_NAME"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), StringCol("CONSTRAINT_TYPE"), StringCol("ENFORCED")},
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
					rows = append(rows, FKConstraintRows(t)...)
				}
			}
			return rows, nil
		})
}

// isKeyColumnUsage is information_schema.KEY_COLUMN_USAGE: the columns of the key constraints and
// foreign keys.
func isKeyColumnUsage(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("CONSTRAINT_CATALOG"), StringCol("CONSTRAINT_SCHEMA"), StringCol("CONSTRAINT_NAME"), StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), StringCol("COLUMN_NAME"), IntCol("ORDINAL_POSITION"), IntCol("POSITION_IN_UNIQUE_CONSTRAINT"), StringCol("REFERENCED_TABLE_SCHEMA"), StringCol("REFERENCED_TABLE_NAME"), StringCol("REFERENCED_COLUMN_NAME")},
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
					rows = append(rows, FKKeyUsageRows(t)...)
				}
			}
			return rows, nil
		})
}

// isCheckConstraints is information_schema.CHECK_CONSTRAINTS: the CHECK constraints and their
// expressions.
func isCheckConstraints(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("CONSTRAINT_CATALOG"), StringCol("CONSTRAINT_SCHEMA"), StringCol("CONSTRAINT_NAME"), StringCol("CHECK_CLAUSE")},
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
		})
}

// isViews is information_schema.VIEWS: the views and their definitions.
func isViews(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), StringCol("VIEW_DEFINITION"), StringCol("CHECK_OPTION"),
		StringCol("IS_UPDATABLE"), StringCol("DEFINER"), StringCol("SECURITY_TYPE"), StringCol("CHARACTER_SET_CLIENT"), StringCol("COLLATION_CONNECTION")},
		func(*expr.Env) ([][]types.Value, error) { return ViewRows(cat), nil })
}

// isReferentialConstraints is information_schema.REFERENTIAL_CONSTRAINTS: the foreign keys and
// their rules.
func isReferentialConstraints(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("CONSTRAINT_CATALOG"), StringCol("CONSTRAINT_SCHEMA"), StringCol("CONSTRAINT_NAME"),
		StringCol("UNIQUE_CONSTRAINT_CATALOG"), StringCol("UNIQUE_CONSTRAINT_SCHEMA"), StringCol("UNIQUE_CONSTRAINT_NAME"), StringCol("MATCH_OPTION"),
		StringCol("UPDATE_RULE"), StringCol("DELETE_RULE"), StringCol("TABLE_NAME"), StringCol("REFERENCED_TABLE_NAME")},
		func(*expr.Env) ([][]types.Value, error) { return referentialRows(cat), nil })
}

// isEngines is information_schema.ENGINES: the one engine.
func isEngines(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("ENGINE"), StringCol("SUPPORT"), StringCol("COMMENT"), StringCol("TRANSACTIONS"), StringCol("XA"), StringCol("SAVEPOINTS")}, func(*expr.Env) ([][]types.Value, error) {
		return [][]types.Value{{stringVal("InnoDB"), stringVal("DEFAULT"), stringVal("Kiln: pebble LSM under a replicated binlog"), stringVal("YES"), stringVal("NO"), stringVal("YES")}}, nil
	})
}

// isCharacterSets is information_schema.CHARACTER_SETS: the character sets.
func isCharacterSets(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("CHARACTER_SET_NAME"), StringCol("DEFAULT_COLLATE_NAME"), StringCol("DESCRIPTION"), IntCol("MAXLEN")}, func(*expr.Env) ([][]types.Value, error) {
		var rows [][]types.Value
		for _, r := range CharsetRows() {
			rows = append(rows, []types.Value{r[0], r[2], r[1], r[3]})
		}
		return rows, nil
	})
}

// isCollations is information_schema.COLLATIONS: the collations.
func isCollations(s Session, cat *catalog.Catalog) Table {
	return table([]Col{StringCol("COLLATION_NAME"), StringCol("CHARACTER_SET_NAME"), IntCol("ID"), StringCol("IS_DEFAULT"), StringCol("IS_COMPILED"), IntCol("SORTLEN"), StringCol("PAD_ATTRIBUTE")}, func(*expr.Env) ([][]types.Value, error) {
		return CollationRows(), nil
	})
}
