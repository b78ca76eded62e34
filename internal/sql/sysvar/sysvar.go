// Package sysvar owns the definitions of the system variables: each variable's name, scope
// (GLOBAL, SESSION or both), default, whether it is read-only, and how a SET of it is validated and
// normalised (booleans to 0/1, integers clipped to their range with a 1292 warning, character
// sets, collations, isolation levels, time zones and sql_mode checked, each with MySQL's error).
// Variables Kiln does not act on are defined too, because clients read them at connect time
// (JDBC, mysqldump, sysbench).
//
// It holds no values: the server's global values and each session's live in the facade
// (internal/sql), which reads a variable through its *Var (looked up once, e.g. Durability at every
// commit) so that the statement path does no extra lookup. This package must not import
// internal/sql, and it has no side effects: what a SET GLOBAL does to the server (the deadlock
// detector, ...) and what a session SET does to the session (autocommit commits) stay with the
// facade.
package sysvar

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-db/kiln/internal/sql/gtid"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Scope says where a variable may be set.
type Scope uint8

// The scopes.
const (
	Both    Scope = iota // SET [SESSION] and SET GLOBAL
	Global               // SET GLOBAL only
	Session              // SET [SESSION] only
)

// DefaultMemQuota is kiln_mem_quota_query's default: 1 GiB, as TiDB's tidb_mem_quota_query.
const DefaultMemQuota = 1 << 30

// Var is a system variable's definition.
type Var struct {
	Name     string
	Scope    Scope
	Default  types.Value
	ReadOnly bool
	// SessionReadOnly: the session value is the global one copied at connect and only SET GLOBAL
	// changes it (max_allowed_packet, net_buffer_length: the protocol layer sized its buffers by it).
	SessionReadOnly bool
	IsBool          bool // values are 0 or 1 (ON/OFF, TRUE/FALSE accepted)
	IsInt           bool // values are integers clipped to [Min, Max] (Max 0: no upper bound)
	Min, Max        int64
}

var vars = map[string]*Var{}

// Variables the facade reads at every commit or LOAD DATA: looked up once.
var (
	Durability    *Var // kiln_durability
	BeforeImages  *Var // kiln_log_before_images
	PlanCacheSize *Var // kiln_plan_cache_size
	LocalInfile   *Var // local_infile
)

// stringVal and intVal build the defaults below.
func stringVal(s string) types.Value { return types.NewString(s) }
func intVal(i int64) types.Value     { return types.NewInt(i) }

func defVar(name string, scope Scope, def types.Value, opts ...func(*Var)) {
	v := &Var{Name: name, Scope: scope, Default: def}
	for _, o := range opts {
		o(v)
	}
	vars[name] = v
}

// readOnly, boolean and intRange are defVar's options.
func readOnly(v *Var)        { v.ReadOnly = true }
func sessionReadOnly(v *Var) { v.SessionReadOnly = true }
func boolean(v *Var)         { v.IsBool = true }
func intRange(lo, hi int64) func(*Var) {
	return func(v *Var) { v.IsInt, v.Min, v.Max = true, lo, hi }
}

func init() {
	defVar("autocommit", Both, intVal(1), boolean)
	defVar("auto_increment_increment", Both, intVal(1), intRange(1, 65535))
	defVar("auto_increment_offset", Both, intVal(1), intRange(1, 65535))
	defVar("character_set_client", Both, stringVal("utf8mb4"))
	defVar("character_set_connection", Both, stringVal("utf8mb4"))
	defVar("character_set_results", Both, stringVal("utf8mb4"))
	defVar("character_set_server", Both, stringVal("utf8mb4"))
	defVar("character_set_database", Both, stringVal("utf8mb4"))
	defVar("character_set_system", Global, stringVal("utf8mb3"), readOnly)
	defVar("character_set_filesystem", Both, stringVal("binary"))
	defVar("collation_connection", Both, stringVal("utf8mb4_0900_ai_ci"))
	defVar("collation_server", Both, stringVal("utf8mb4_0900_ai_ci"))
	defVar("collation_database", Both, stringVal("utf8mb4_0900_ai_ci"))
	defVar("default_collation_for_utf8mb4", Both, stringVal("utf8mb4_0900_ai_ci"))
	defVar("init_connect", Global, stringVal(""))
	defVar("interactive_timeout", Both, intVal(28800), intRange(1, 31536000))
	defVar("wait_timeout", Both, intVal(28800), intRange(1, 31536000))
	defVar("net_write_timeout", Both, intVal(60), intRange(1, 31536000))
	defVar("net_read_timeout", Both, intVal(30), intRange(1, 31536000))
	defVar("net_buffer_length", Both, intVal(16384), intRange(1024, 1<<20), sessionReadOnly)
	defVar("max_allowed_packet", Both, intVal(64<<20), intRange(1024, 1<<30), sessionReadOnly)
	defVar("max_execution_time", Both, intVal(0), intRange(0, 1<<32-1))
	defVar("max_connections", Global, intVal(151), intRange(1, 100000))
	defVar("sql_mode", Both, stringVal("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"))
	defVar("sql_select_limit", Both, types.NewUint(1<<64-1))
	defVar("sql_auto_is_null", Both, intVal(0), boolean)
	defVar("sql_safe_updates", Both, intVal(0), boolean)
	defVar("sql_notes", Both, intVal(1), boolean)
	defVar("sql_quote_show_create", Both, intVal(1), boolean)
	defVar("sql_log_bin", Both, intVal(1), boolean)
	defVar("sql_require_primary_key", Both, intVal(0), boolean)
	defVar("foreign_key_checks", Both, intVal(1), boolean)
	defVar("unique_checks", Both, intVal(1), boolean)
	defVar("time_zone", Both, stringVal("SYSTEM"))
	defVar("system_time_zone", Global, stringVal(systemTZ()), readOnly)
	defVar("transaction_isolation", Both, stringVal("REPEATABLE-READ"))
	defVar("tx_isolation", Both, stringVal("REPEATABLE-READ"))
	defVar("transaction_read_only", Both, intVal(0), boolean)
	defVar("tx_read_only", Both, intVal(0), boolean)
	defVar("innodb_lock_wait_timeout", Both, intVal(50), intRange(1, 1073741824))
	defVar("innodb_deadlock_detect", Global, intVal(1), boolean) // the facade applies SET GLOBAL
	defVar("lock_wait_timeout", Both, intVal(31536000), intRange(1, 31536000))
	defVar("lower_case_table_names", Global, intVal(0), readOnly)
	defVar("lower_case_file_system", Global, intVal(0), readOnly)
	defVar("license", Global, stringVal("Apache-2.0"), readOnly)
	defVar("version_comment", Global, stringVal("Kiln"), readOnly)
	defVar("version_compile_os", Global, stringVal("Linux"), readOnly)
	defVar("version_compile_machine", Global, stringVal("x86_64"), readOnly)
	defVar("query_cache_size", Global, intVal(0))
	defVar("query_cache_type", Both, stringVal("OFF"))
	defVar("performance_schema", Global, intVal(0), readOnly)
	// TLS (the facade's newGlobalVars sets them from Config when the server has a certificate).
	defVar("have_ssl", Global, stringVal("DISABLED"), readOnly)
	defVar("have_openssl", Global, stringVal("DISABLED"), readOnly)
	defVar("ssl_ca", Global, stringVal(""), readOnly)
	defVar("ssl_cert", Global, stringVal(""), readOnly)
	defVar("ssl_key", Global, stringVal(""), readOnly)
	defVar("tls_version", Global, stringVal(""), readOnly)
	defVar("require_secure_transport", Global, intVal(0), boolean)
	defVar("default_storage_engine", Both, stringVal("InnoDB"))
	defVar("default_tmp_storage_engine", Both, stringVal("InnoDB"))
	defVar("storage_engine", Both, stringVal("InnoDB"))
	defVar("div_precision_increment", Both, intVal(4), intRange(0, 30))
	defVar("group_concat_max_len", Both, intVal(1024), intRange(4, 1<<32-1))
	// kiln_mem_quota_query bounds the memory one statement may hold (bytes; 0: no quota), as
	// TiDB's tidb_mem_quota_query; past it the statement fails with 3170 (resultsize.go, memory).
	defVar("kiln_mem_quota_query", Both, intVal(DefaultMemQuota), intRange(0, 1<<62))
	defVar("default_week_format", Both, intVal(0), intRange(0, 7))
	defVar("last_insert_id", Session, intVal(0))
	defVar("identity", Session, intVal(0))
	defVar("warning_count", Session, intVal(0), readOnly)
	defVar("error_count", Session, intVal(0), readOnly)
	defVar("session_track_gtids", Both, stringVal("OFF"))
	defVar("session_track_schema", Both, intVal(1), boolean)
	defVar("session_track_state_change", Both, intVal(0), boolean)
	defVar("session_track_system_variables", Both, stringVal("time_zone,autocommit,character_set_client,character_set_results,character_set_connection"))
	defVar("session_track_transaction_info", Both, stringVal("OFF"))
	defVar("binlog_format", Both, stringVal("ROW"))
	defVar("log_bin", Global, intVal(1), readOnly)
	// GTIDs are Kiln's log positions: <cluster uuid>:<log index> (internal/sql/gtidread.go).
	// gtid_executed and server_uuid are computed when read. A dump of a MySQL GTID server sets
	// gtid_purged, mysqlbinlog's output gtid_next: accepted, without effect.
	defVar("gtid_mode", Global, stringVal("ON"), readOnly)
	defVar("gtid_executed", Global, stringVal(""), readOnly)
	defVar("server_uuid", Global, stringVal(""), readOnly)
	// kiln_read_after_gtid: a GTID set every following read waits for (as WAIT_FOR_EXECUTED_GTID_SET
	// does) before it runs, up to kiln_read_after_gtid_timeout seconds (0: no limit but the
	// statement's own: KILL, max_execution_time).
	defVar("kiln_read_after_gtid", Session, stringVal(""))
	defVar("kiln_read_after_gtid_timeout", Both, intVal(60), intRange(0, 31536000))
	// kiln_read_concern: local (this node's applied state, always committed) or linearizable
	// (every commit acknowledged before the statement started, on any member: raft's ReadIndex,
	// then a wait to apply it, bounded by kiln_read_after_gtid_timeout).
	defVar("kiln_read_concern", Both, stringVal("local"))
	// kiln_commit_ack: durable (a majority fsynced the commit) or applied (also a majority of the
	// engine-bearing voters applied it: a read on any of them right after sees it; commitack.go).
	defVar("kiln_commit_ack", Both, stringVal("durable"))
	defVar("gtid_purged", Global, stringVal(""))
	defVar("gtid_next", Session, stringVal("AUTOMATIC"))
	defVar("enforce_gtid_consistency", Global, stringVal("OFF"), readOnly)
	defVar("server_id", Global, intVal(1))
	defVar("port", Global, intVal(3306), readOnly)
	defVar("socket", Global, stringVal(""), readOnly)
	defVar("hostname", Global, stringVal("localhost"), readOnly)
	defVar("datadir", Global, stringVal(""), readOnly)
	defVar("tmpdir", Global, stringVal("/tmp"), readOnly)
	defVar("explicit_defaults_for_timestamp", Both, intVal(1), boolean)
	defVar("old_passwords", Both, intVal(0))
	defVar("default_authentication_plugin", Global, stringVal("caching_sha2_password"), readOnly)
	defVar("transaction_prealloc_size", Both, intVal(4096))
	defVar("transaction_alloc_block_size", Both, intVal(8192))
	defVar("optimizer_switch", Both, stringVal("index_merge=on"))
	defVar("big_tables", Both, intVal(0), boolean)
	defVar("sort_buffer_size", Both, intVal(262144))
	defVar("join_buffer_size", Both, intVal(262144))
	defVar("read_buffer_size", Both, intVal(131072))
	defVar("tmp_table_size", Both, intVal(16777216))
	defVar("max_heap_table_size", Both, intVal(16777216))
	defVar("innodb_buffer_pool_size", Global, intVal(134217728))
	defVar("innodb_flush_log_at_trx_commit", Global, intVal(1))
	defVar("sync_binlog", Global, intVal(1))
	defVar("innodb_file_per_table", Global, intVal(1))
	defVar("innodb_strict_mode", Both, intVal(1), boolean)
	defVar("innodb_autoinc_lock_mode", Global, intVal(2), readOnly)
	defVar("max_sp_recursion_depth", Both, intVal(0))
	defVar("max_join_size", Both, types.NewUint(1<<64-1))
	defVar("sql_big_selects", Both, intVal(1), boolean)
	defVar("sql_buffer_result", Both, intVal(0), boolean)
	defVar("sql_warnings", Both, intVal(0), boolean)
	defVar("profiling", Both, intVal(0), boolean)
	defVar("character_sets_dir", Global, stringVal("/usr/share/mysql/charsets/"), readOnly)
	defVar("block_encryption_mode", Both, stringVal("aes-128-ecb"))
	defVar("cte_max_recursion_depth", Both, intVal(1000), intRange(0, 1<<32-1))
	defVar("information_schema_stats_expiry", Both, intVal(86400))
	defVar("resultset_metadata", Session, stringVal("FULL"))
	defVar("net_retry_count", Both, intVal(10))
	defVar("long_query_time", Both, types.NewFloat(10))
	defVar("slow_query_log", Global, intVal(0))
	defVar("general_log", Global, intVal(0))
	defVar("version", Global, stringVal(""), readOnly)
	defVar("protocol_version", Global, intVal(10), readOnly)
	defVar("read_only", Global, intVal(0), boolean)
	defVar("super_read_only", Global, intVal(0), boolean)
	defVar("thread_handling", Global, stringVal("one-thread-per-connection"), readOnly)
	defVar("kiln_durability", Both, stringVal("sync"))
	Durability = Must("kiln_durability")
	// kiln_log_before_images: commit records carry each written row's previous value, for change data
	// capture (MySQL's binlog_row_image=FULL plays this part there). Off: after-images only.
	defVar("kiln_log_before_images", Global, intVal(0), boolean)
	BeforeImages = Must("kiln_log_before_images")
	// kiln_early_lock_release: a commit's row locks are released once its record has its place in
	// the log, before it is durable; its successors read the pending version under their locks and
	// are acknowledged only after it (internal/txn/pending.go). The facade applies SET GLOBAL.
	defVar("kiln_early_lock_release", Global, intVal(1), boolean)
	// kiln_plan_cache_size: how many text statements differing only in literals a session keeps
	// parsed and planned (internal/sql/plancache.go); 0 turns the cache off.
	defVar("kiln_plan_cache_size", Both, intVal(32), intRange(0, 4096))
	PlanCacheSize = Must("kiln_plan_cache_size")
	// local_infile: MySQL 8's default is OFF; Kiln's is ON, as MariaDB's, so that clients that ask
	// for local files (mysql --local-infile, pymysql local_infile=True, the Go driver's
	// allowAllFiles) work without server configuration. The client must still opt in.
	defVar("local_infile", Global, intVal(1), boolean)
	LocalInfile = Must("local_infile")
	// secure_file_priv = NULL: the server neither reads nor writes files of its own
	// (LOAD DATA INFILE without LOCAL, SELECT ... INTO OUTFILE).
	defVar("secure_file_priv", Global, types.Null, readOnly) // Config.SecureFilePriv sets it
}

func systemTZ() string {
	name, _ := time.Now().Zone()
	if name == "" {
		return "UTC"
	}
	return name
}

// Lookup finds a variable by name, in any case.
func Lookup(name string) (*Var, bool) {
	v, ok := vars[strings.ToLower(name)]
	return v, ok
}

// Must returns the variable of a lower-case name that is known to exist.
func Must(name string) *Var {
	v, ok := vars[name]
	if !ok {
		panic("unknown system variable " + name)
	}
	return v
}

// Names returns every variable's name, sorted.
func Names() []string {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Validate checks a SET of variable name (as the statement spells it, for messages) in the given
// scope and returns the variable and the value to store: booleans become 0/1, integers are clipped
// to the variable's range (with the 1292 warning MySQL gives, returned in warn), strings are
// normalised. A NULL becomes the empty string for string variables and an error for the others.
func Validate(name string, global bool, val types.Value) (v *Var, out types.Value, warn *sqlerr.Warning, err error) {
	v, ok := Lookup(name)
	if !ok {
		return nil, types.Null, nil, sqlerr.New(sqlerr.ErrUnknownSystemVar, "Unknown system variable '%s'", name)
	}
	if v.ReadOnly {
		return nil, types.Null, nil, sqlerr.New(sqlerr.ErrIncorrectGlobalLocalVar, "Variable '%s' is a read only variable", name)
	}
	if global && v.Scope == Session {
		return nil, types.Null, nil, sqlerr.New(sqlerr.ErrLocalVariable, "Variable '%s' is a SESSION variable and can't be used with SET GLOBAL", name)
	}
	if !global && v.SessionReadOnly {
		return nil, types.Null, nil, sqlerr.New(sqlerr.ErrVariableIsReadonly, "SESSION variable '%s' is read-only. Use SET GLOBAL to assign the value", name)
	}
	if !global && v.Scope == Global {
		return nil, types.Null, nil, sqlerr.New(sqlerr.ErrGlobalVariable, "Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL", name)
	}
	if val.IsNull() {
		if v.IsBool || v.IsInt {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable '%s' can't be set to the value of 'NULL'", name)
		}
		val = stringVal("")
	}
	switch {
	case v.IsBool:
		switch strings.ToUpper(types.ToString(val)) {
		case "ON", "1", "TRUE":
			val = intVal(1)
		case "OFF", "0", "FALSE":
			val = intVal(0)
		default:
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable '%s' can't be set to the value of '%s'", name, types.ToString(val))
		}
	case v.IsInt:
		if val.K == types.KindString {
			if _, err := strconv.ParseInt(strings.TrimSpace(val.S), 10, 64); err != nil {
				return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongTypeForVar, "Incorrect argument type to variable '%s'", name)
			}
		}
		n := types.ToIntLenient(val)
		if n < v.Min {
			warn = truncated(fmt.Sprintf("Truncated incorrect %s value: '%d'", name, n))
			n = v.Min
		}
		if v.Max > 0 && n > v.Max {
			warn = truncated(fmt.Sprintf("Truncated incorrect %s value: '%d'", name, n))
			n = v.Max
		}
		val = intVal(n)
	default:
		val = stringVal(types.ToString(val))
	}
	switch v.Name {
	case "transaction_isolation", "tx_isolation":
		iso := strings.ToUpper(strings.ReplaceAll(types.ToString(val), " ", "-"))
		switch iso {
		case "REPEATABLE-READ", "READ-COMMITTED", "SERIALIZABLE", "READ-UNCOMMITTED":
		default:
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable '%s' can't be set to the value of '%s'", name, types.ToString(val))
		}
		val = stringVal(iso)
	case "time_zone":
		if _, err := ParseTimeZone(types.ToString(val)); err != nil && !strings.EqualFold(types.ToString(val), "SYSTEM") {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrUnknownTimeZone, "Unknown or incorrect time zone: '%s'", types.ToString(val))
		}
	case "sql_mode":
		m := strings.ToUpper(types.ToString(val))
		if _, err := ParseSQLMode(m); err != nil {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'sql_mode' can't be set to the value of '%s'", types.ToString(val))
		}
		val = stringVal(m)
	case "collation_connection", "collation_server", "collation_database":
		if _, ok := types.LookupCollation(types.ToString(val)); !ok {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", types.ToString(val))
		}
	case "character_set_client", "character_set_connection", "character_set_results", "character_set_server", "character_set_database":
		cs := strings.ToLower(types.ToString(val))
		if cs == "" && v.Name == "character_set_results" {
			val = types.Null // SET character_set_results = NULL: no conversion
			break
		}
		if cs == "utf8" {
			cs = "utf8mb3"
		}
		if _, ok := types.DefaultCollation(cs); !ok {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", types.ToString(val))
		}
		val = stringVal(cs)
	case "session_track_gtids":
		// An ENUM: its names (any case) or their ordinals.
		names := []string{"OFF", "OWN_GTID", "ALL_GTIDS"}
		g := strings.ToUpper(types.ToString(val))
		if n, err := strconv.Atoi(g); err == nil && n >= 0 && n < len(names) {
			g = names[n]
		}
		if !slices.Contains(names, g) {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'session_track_gtids' can't be set to the value of '%s'", types.ToString(val))
		}
		val = stringVal(g)
	case "kiln_read_after_gtid":
		if val.IsNull() {
			val = stringVal("")
		}
		if _, err := gtid.Parse(types.ToString(val)); err != nil {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrMalformedGTIDSetSpecification, "Malformed GTID set specification '%s'.", types.ToString(val))
		}
	case "kiln_read_concern":
		c := strings.ToLower(types.ToString(val))
		if c != "local" && c != "linearizable" {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'kiln_read_concern' can't be set to the value of '%s'", types.ToString(val))
		}
		val = stringVal(c)
	case "kiln_commit_ack":
		a := strings.ToLower(types.ToString(val))
		if a != "durable" && a != "applied" {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'kiln_commit_ack' can't be set to the value of '%s'", types.ToString(val))
		}
		val = stringVal(a)
	case "kiln_durability":
		d := strings.ToLower(types.ToString(val))
		if d != "sync" && d != "async" {
			return nil, types.Null, nil, sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'kiln_durability' can't be set to the value of '%s'", d)
		}
		val = stringVal(d)
	}
	return v, val, warn, nil
}

func truncated(msg string) *sqlerr.Warning {
	return &sqlerr.Warning{Level: "Warning", Code: sqlerr.ErrTruncatedWrongValue, Message: msg}
}

// ParseSQLMode splits an sql_mode value (upper case) into its modes; an unknown mode is an error.
func ParseSQLMode(m string) ([]string, error) {
	known := map[string]bool{"": true, "ONLY_FULL_GROUP_BY": true, "STRICT_TRANS_TABLES": true, "STRICT_ALL_TABLES": true,
		"NO_ZERO_IN_DATE": true, "NO_ZERO_DATE": true, "ERROR_FOR_DIVISION_BY_ZERO": true, "NO_ENGINE_SUBSTITUTION": true,
		"NO_AUTO_VALUE_ON_ZERO": true, "ANSI_QUOTES": true, "PIPES_AS_CONCAT": true, "IGNORE_SPACE": true,
		"NO_BACKSLASH_ESCAPES": true, "REAL_AS_FLOAT": true, "HIGH_NOT_PRECEDENCE": true, "NO_UNSIGNED_SUBTRACTION": true,
		"NO_DIR_IN_CREATE": true, "PAD_CHAR_TO_FULL_LENGTH": true, "TIME_TRUNCATE_FRACTIONAL": true, "ANSI": true,
		"TRADITIONAL": true, "ALLOW_INVALID_DATES": true, "NO_AUTO_CREATE_USER": true, "NO_FIELD_OPTIONS": true,
		"NO_KEY_OPTIONS": true, "NO_TABLE_OPTIONS": true, "MYSQL323": true, "MYSQL40": true, "DB2": true,
		"MAXDB": true, "MSSQL": true, "ORACLE": true, "POSTGRESQL": true, "SIMULTANEOUS_ASSIGNMENT": true,
		"EMPTY_STRING_IS_NULL": true}
	var out []string
	for _, f := range strings.Split(m, ",") {
		f = strings.TrimSpace(f)
		if !known[f] {
			return nil, fmt.Errorf("unknown sql_mode %q", f)
		}
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

// ParseTimeZone accepts 'SYSTEM', '+HH:MM'/'-HH:MM' offsets and IANA names.
func ParseTimeZone(tz string) (*time.Location, error) {
	if strings.EqualFold(tz, "SYSTEM") {
		return time.Local, nil
	}
	if len(tz) >= 5 && (tz[0] == '+' || tz[0] == '-') {
		parts := strings.SplitN(tz[1:], ":", 2)
		if len(parts) == 2 {
			h, err1 := strconv.Atoi(parts[0])
			m, err2 := strconv.Atoi(parts[1])
			if err1 == nil && err2 == nil && h <= 14 && m < 60 {
				off := h*3600 + m*60
				if tz[0] == '-' {
					off = -off
				}
				return time.FixedZone(tz, off), nil
			}
		}
		return nil, fmt.Errorf("bad time zone %q", tz)
	}
	if strings.EqualFold(tz, "UTC") {
		return time.UTC, nil
	}
	return time.LoadLocation(tz)
}
