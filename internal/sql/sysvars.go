package sql

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

type varScope uint8

const (
	scopeBoth varScope = iota
	scopeGlobal
	scopeSession
)

// sysVar is a system variable. Those Kiln does not act on are still readable, because clients read
// them at connect time (JDBC, mysqldump, sysbench).
type sysVar struct {
	name     string
	scope    varScope
	def      types.Value
	readOnly bool
	isBool   bool
	isInt    bool
	min, max int64
	onSet    func(db *DB, v types.Value) // global side effects
}

var sysVars = map[string]*sysVar{}

func str(s string) types.Value { return types.NewString(s) }
func num(i int64) types.Value  { return types.NewInt(i) }

func defVar(name string, scope varScope, def types.Value, opts ...func(*sysVar)) {
	v := &sysVar{name: name, scope: scope, def: def}
	for _, o := range opts {
		o(v)
	}
	sysVars[name] = v
}

func ro(v *sysVar)      { v.readOnly = true }
func boolean(v *sysVar) { v.isBool = true }
func intRange(lo, hi int64) func(*sysVar) {
	return func(v *sysVar) { v.isInt, v.min, v.max = true, lo, hi }
}

func init() {
	defVar("autocommit", scopeBoth, num(1), boolean)
	defVar("auto_increment_increment", scopeBoth, num(1), intRange(1, 65535))
	defVar("auto_increment_offset", scopeBoth, num(1), intRange(1, 65535))
	defVar("character_set_client", scopeBoth, str("utf8mb4"))
	defVar("character_set_connection", scopeBoth, str("utf8mb4"))
	defVar("character_set_results", scopeBoth, str("utf8mb4"))
	defVar("character_set_server", scopeBoth, str("utf8mb4"))
	defVar("character_set_database", scopeBoth, str("utf8mb4"))
	defVar("character_set_system", scopeGlobal, str("utf8mb3"), ro)
	defVar("character_set_filesystem", scopeBoth, str("binary"))
	defVar("collation_connection", scopeBoth, str("utf8mb4_0900_ai_ci"))
	defVar("collation_server", scopeBoth, str("utf8mb4_0900_ai_ci"))
	defVar("collation_database", scopeBoth, str("utf8mb4_0900_ai_ci"))
	defVar("default_collation_for_utf8mb4", scopeBoth, str("utf8mb4_0900_ai_ci"))
	defVar("init_connect", scopeGlobal, str(""))
	defVar("interactive_timeout", scopeBoth, num(28800), intRange(1, 31536000))
	defVar("wait_timeout", scopeBoth, num(28800), intRange(1, 31536000))
	defVar("net_write_timeout", scopeBoth, num(60), intRange(1, 31536000))
	defVar("net_read_timeout", scopeBoth, num(30), intRange(1, 31536000))
	defVar("net_buffer_length", scopeBoth, num(16384))
	defVar("max_allowed_packet", scopeBoth, num(64<<20), intRange(1024, 1<<30))
	defVar("max_execution_time", scopeBoth, num(0), intRange(0, 1<<32-1))
	defVar("max_connections", scopeGlobal, num(151), intRange(1, 100000))
	defVar("sql_mode", scopeBoth, str("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"))
	defVar("sql_select_limit", scopeBoth, types.NewUint(1<<64-1))
	defVar("sql_auto_is_null", scopeBoth, num(0), boolean)
	defVar("sql_safe_updates", scopeBoth, num(0), boolean)
	defVar("sql_notes", scopeBoth, num(1), boolean)
	defVar("sql_quote_show_create", scopeBoth, num(1), boolean)
	defVar("sql_log_bin", scopeBoth, num(1), boolean)
	defVar("sql_require_primary_key", scopeBoth, num(0), boolean)
	defVar("foreign_key_checks", scopeBoth, num(1), boolean)
	defVar("unique_checks", scopeBoth, num(1), boolean)
	defVar("time_zone", scopeBoth, str("SYSTEM"))
	defVar("system_time_zone", scopeGlobal, str(systemTZ()), ro)
	defVar("transaction_isolation", scopeBoth, str("REPEATABLE-READ"))
	defVar("tx_isolation", scopeBoth, str("REPEATABLE-READ"))
	defVar("transaction_read_only", scopeBoth, num(0), boolean)
	defVar("tx_read_only", scopeBoth, num(0), boolean)
	defVar("innodb_lock_wait_timeout", scopeBoth, num(50), intRange(1, 1073741824))
	defVar("innodb_deadlock_detect", scopeGlobal, num(1), boolean, func(v *sysVar) {
		v.onSet = func(db *DB, val types.Value) { b, _ := types.ToBool(val); db.setDeadlockDetect(b) }
	})
	defVar("lock_wait_timeout", scopeBoth, num(31536000), intRange(1, 31536000))
	defVar("lower_case_table_names", scopeGlobal, num(0), ro)
	defVar("lower_case_file_system", scopeGlobal, num(0), ro)
	defVar("license", scopeGlobal, str("Apache-2.0"), ro)
	defVar("version_comment", scopeGlobal, str("Kiln"), ro)
	defVar("version_compile_os", scopeGlobal, str("Linux"), ro)
	defVar("version_compile_machine", scopeGlobal, str("x86_64"), ro)
	defVar("query_cache_size", scopeGlobal, num(0))
	defVar("query_cache_type", scopeBoth, str("OFF"))
	defVar("performance_schema", scopeGlobal, num(0), ro)
	// TLS (newGlobalVars sets them from Config when the server has a certificate).
	defVar("have_ssl", scopeGlobal, str("DISABLED"), ro)
	defVar("have_openssl", scopeGlobal, str("DISABLED"), ro)
	defVar("ssl_ca", scopeGlobal, str(""), ro)
	defVar("ssl_cert", scopeGlobal, str(""), ro)
	defVar("ssl_key", scopeGlobal, str(""), ro)
	defVar("tls_version", scopeGlobal, str(""), ro)
	defVar("require_secure_transport", scopeGlobal, num(0), boolean)
	defVar("default_storage_engine", scopeBoth, str("InnoDB"))
	defVar("default_tmp_storage_engine", scopeBoth, str("InnoDB"))
	defVar("storage_engine", scopeBoth, str("InnoDB"))
	defVar("div_precision_increment", scopeBoth, num(4), intRange(0, 30))
	defVar("group_concat_max_len", scopeBoth, num(1024), intRange(4, 1<<32-1))
	// kiln_mem_quota_query bounds the memory one statement may hold (bytes; 0: no quota), as
	// TiDB's tidb_mem_quota_query; past it the statement fails with 3170 (resultsize.go, memory).
	defVar("kiln_mem_quota_query", scopeBoth, num(defaultMemQuota), intRange(0, 1<<62))
	defVar("default_week_format", scopeBoth, num(0), intRange(0, 7))
	defVar("last_insert_id", scopeSession, num(0))
	defVar("identity", scopeSession, num(0))
	defVar("warning_count", scopeSession, num(0), ro)
	defVar("error_count", scopeSession, num(0), ro)
	defVar("session_track_gtids", scopeBoth, str("OFF"))
	defVar("session_track_schema", scopeBoth, num(1), boolean)
	defVar("session_track_state_change", scopeBoth, num(0), boolean)
	defVar("session_track_system_variables", scopeBoth, str("time_zone,autocommit,character_set_client,character_set_results,character_set_connection"))
	defVar("session_track_transaction_info", scopeBoth, str("OFF"))
	defVar("binlog_format", scopeBoth, str("ROW"))
	defVar("log_bin", scopeGlobal, num(1), ro)
	defVar("gtid_mode", scopeGlobal, str("OFF"), ro)
	// Read by mysqldump (--set-gtid-purged) and replication tools; Kiln has no MySQL GTIDs. A dump of
	// a GTID server sets gtid_purged, mysqlbinlog's output gtid_next: accepted, without effect.
	defVar("gtid_executed", scopeGlobal, str(""), ro)
	defVar("gtid_purged", scopeGlobal, str(""))
	defVar("gtid_next", scopeSession, str("AUTOMATIC"))
	defVar("enforce_gtid_consistency", scopeGlobal, str("OFF"), ro)
	defVar("server_id", scopeGlobal, num(1))
	defVar("port", scopeGlobal, num(3306), ro)
	defVar("socket", scopeGlobal, str(""), ro)
	defVar("hostname", scopeGlobal, str("localhost"), ro)
	defVar("datadir", scopeGlobal, str(""), ro)
	defVar("tmpdir", scopeGlobal, str("/tmp"), ro)
	defVar("explicit_defaults_for_timestamp", scopeBoth, num(1), boolean)
	defVar("old_passwords", scopeBoth, num(0))
	defVar("default_authentication_plugin", scopeGlobal, str("caching_sha2_password"), ro)
	defVar("transaction_prealloc_size", scopeBoth, num(4096))
	defVar("transaction_alloc_block_size", scopeBoth, num(8192))
	defVar("optimizer_switch", scopeBoth, str("index_merge=on"))
	defVar("big_tables", scopeBoth, num(0), boolean)
	defVar("sort_buffer_size", scopeBoth, num(262144))
	defVar("join_buffer_size", scopeBoth, num(262144))
	defVar("read_buffer_size", scopeBoth, num(131072))
	defVar("tmp_table_size", scopeBoth, num(16777216))
	defVar("max_heap_table_size", scopeBoth, num(16777216))
	defVar("innodb_buffer_pool_size", scopeGlobal, num(134217728))
	defVar("innodb_flush_log_at_trx_commit", scopeGlobal, num(1))
	defVar("sync_binlog", scopeGlobal, num(1))
	defVar("innodb_file_per_table", scopeGlobal, num(1))
	defVar("innodb_strict_mode", scopeBoth, num(1), boolean)
	defVar("innodb_autoinc_lock_mode", scopeGlobal, num(2), ro)
	defVar("max_sp_recursion_depth", scopeBoth, num(0))
	defVar("max_join_size", scopeBoth, types.NewUint(1<<64-1))
	defVar("sql_big_selects", scopeBoth, num(1), boolean)
	defVar("sql_buffer_result", scopeBoth, num(0), boolean)
	defVar("sql_warnings", scopeBoth, num(0), boolean)
	defVar("profiling", scopeBoth, num(0), boolean)
	defVar("character_sets_dir", scopeGlobal, str("/usr/share/mysql/charsets/"), ro)
	defVar("block_encryption_mode", scopeBoth, str("aes-128-ecb"))
	defVar("cte_max_recursion_depth", scopeBoth, num(1000))
	defVar("information_schema_stats_expiry", scopeBoth, num(86400))
	defVar("resultset_metadata", scopeSession, str("FULL"))
	defVar("net_retry_count", scopeBoth, num(10))
	defVar("long_query_time", scopeBoth, types.NewFloat(10))
	defVar("slow_query_log", scopeGlobal, num(0))
	defVar("general_log", scopeGlobal, num(0))
	defVar("version", scopeGlobal, str(""), ro)
	defVar("protocol_version", scopeGlobal, num(10), ro)
	defVar("read_only", scopeGlobal, num(0), boolean)
	defVar("super_read_only", scopeGlobal, num(0), boolean)
	defVar("thread_handling", scopeGlobal, str("one-thread-per-connection"), ro)
	defVar("kiln_durability", scopeBoth, str("sync"))
	durabilityVar = mustSysVar("kiln_durability")
	// kiln_log_before_images: commit records carry each written row's previous value, for change data
	// capture (MySQL's binlog_row_image=FULL plays this part there). Off: after-images only.
	defVar("kiln_log_before_images", scopeGlobal, num(0), boolean)
	beforeImagesVar = mustSysVar("kiln_log_before_images")
}

var durabilityVar *sysVar   // kiln_durability, read at every commit
var beforeImagesVar *sysVar // kiln_log_before_images, read at every commit

func systemTZ() string {
	name, _ := time.Now().Zone()
	if name == "" {
		return "UTC"
	}
	return name
}

func lookupSysVar(name string) (*sysVar, bool) {
	v, ok := sysVars[strings.ToLower(name)]
	return v, ok
}

func mustSysVar(name string) *sysVar {
	v, ok := sysVars[name]
	if !ok {
		panic("unknown system variable " + name)
	}
	return v
}

// globalVars holds the server's global values.
type globalVars struct {
	mu   sync.RWMutex
	vals map[string]types.Value
}

func newGlobalVars(cfg Config) *globalVars {
	g := &globalVars{vals: map[string]types.Value{}}
	g.vals["version"] = str(cfg.Version)
	if cfg.MaxConnections > 0 {
		g.vals["max_connections"] = num(int64(cfg.MaxConnections))
	}
	g.vals["innodb_lock_wait_timeout"] = num(int64(cfg.LockWaitTimeout / time.Second))
	if cfg.Durability != "" {
		g.vals["kiln_durability"] = str(cfg.Durability)
	}
	if cfg.BeforeImages {
		g.vals["kiln_log_before_images"] = num(1)
	}
	g.vals["secure_file_priv"] = secureFilePrivValue(cfg)
	if cfg.SSLCert != "" {
		g.vals["have_ssl"], g.vals["have_openssl"] = str("YES"), str("YES")
		g.vals["ssl_ca"], g.vals["ssl_cert"], g.vals["ssl_key"] = str(cfg.SSLCA), str(cfg.SSLCert), str(cfg.SSLKey)
		g.vals["tls_version"] = str("TLSv1.2,TLSv1.3")
	}
	if cfg.RequireSecureTransport {
		g.vals["require_secure_transport"] = num(1)
	}
	return g
}

func (g *globalVars) get(v *sysVar) types.Value {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if x, ok := g.vals[v.name]; ok {
		return x
	}
	return v.def
}

func (g *globalVars) set(v *sysVar, x types.Value) {
	g.mu.Lock()
	g.vals[v.name] = x
	g.mu.Unlock()
}

// GlobalInt reads an integer global (the server reads max_connections through it).
func (db *DB) GlobalInt(name string) int64 {
	v, ok := lookupSysVar(name)
	if !ok {
		return 0
	}
	return toIntLenient(db.globals.get(v))
}

func (s *Session) getSysVar(v *sysVar, global bool) types.Value {
	switch v.name {
	case "warning_count":
		return num(int64(len(s.warnings)))
	case "error_count":
		n := 0
		for _, w := range s.warnings {
			if w.Level == "Error" {
				n++
			}
		}
		return num(int64(n))
	case "last_insert_id", "identity":
		return types.NewUint(s.lastInsertID)
	case "read_only", "super_read_only":
		if s.db.readOnlyNow() {
			return num(1)
		}
	}
	if !global && v.scope != scopeGlobal {
		if x, ok := s.vars[v.name]; ok {
			return x
		}
	}
	return s.db.globals.get(v)
}

// setSysVar validates and assigns a system variable.
func (s *Session) setSysVar(name string, global bool, val types.Value) error {
	v, ok := lookupSysVar(name)
	if !ok {
		return sqlerr.New(sqlerr.ErrUnknownSystemVar, "Unknown system variable '%s'", name)
	}
	if v.readOnly {
		return sqlerr.New(1238, "Variable '%s' is a read only variable", name)
	}
	if global && v.scope == scopeSession {
		return sqlerr.New(sqlerr.ErrIncorrectGlobalLocal, "Variable '%s' is a SESSION variable and can't be used with SET GLOBAL", name)
	}
	if !global && v.scope == scopeGlobal {
		return sqlerr.New(sqlerr.ErrIncorrectGlobalLocal, "Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL", name)
	}
	if val.IsNull() {
		if v.isBool || v.isInt {
			return sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable '%s' can't be set to the value of 'NULL'", name)
		}
		val = str("")
	}
	switch {
	case v.isBool:
		switch strings.ToUpper(types.ToString(val)) {
		case "ON", "1", "TRUE":
			val = num(1)
		case "OFF", "0", "FALSE":
			val = num(0)
		default:
			return sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable '%s' can't be set to the value of '%s'", name, types.ToString(val))
		}
	case v.isInt:
		if val.K == types.KindString {
			if _, err := strconv.ParseInt(strings.TrimSpace(val.S), 10, 64); err != nil {
				return sqlerr.New(sqlerr.ErrWrongTypeForVar, "Incorrect argument type to variable '%s'", name)
			}
		}
		n := toIntLenient(val)
		if n < v.min {
			s.addWarning("Warning", 1292, fmt.Sprintf("Truncated incorrect %s value: '%d'", name, n))
			n = v.min
		}
		if v.max > 0 && n > v.max {
			s.addWarning("Warning", 1292, fmt.Sprintf("Truncated incorrect %s value: '%d'", name, n))
			n = v.max
		}
		val = num(n)
	default:
		val = str(types.ToString(val))
	}
	switch v.name {
	case "transaction_isolation", "tx_isolation":
		iso := strings.ToUpper(strings.ReplaceAll(types.ToString(val), " ", "-"))
		switch iso {
		case "REPEATABLE-READ", "READ-COMMITTED", "SERIALIZABLE", "READ-UNCOMMITTED":
		default:
			return sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable '%s' can't be set to the value of '%s'", name, types.ToString(val))
		}
		val = str(iso)
	case "time_zone":
		if _, err := parseTimeZone(types.ToString(val)); err != nil && !strings.EqualFold(types.ToString(val), "SYSTEM") {
			return sqlerr.New(sqlerr.ErrUnknownTimeZone, "Unknown or incorrect time zone: '%s'", types.ToString(val))
		}
	case "sql_mode":
		m := strings.ToUpper(types.ToString(val))
		if _, err := parseSQLMode(m); err != nil {
			return sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'sql_mode' can't be set to the value of '%s'", types.ToString(val))
		}
		val = str(m)
	case "collation_connection", "collation_server", "collation_database":
		if _, ok := types.LookupCollation(types.ToString(val)); !ok {
			return sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", types.ToString(val))
		}
	case "character_set_client", "character_set_connection", "character_set_results", "character_set_server", "character_set_database":
		cs := strings.ToLower(types.ToString(val))
		if cs == "" && v.name == "character_set_results" {
			val = types.Null // SET character_set_results = NULL: no conversion
			break
		}
		if cs == "utf8" {
			cs = "utf8mb3"
		}
		if _, ok := types.DefaultCollation(cs); !ok {
			return sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", types.ToString(val))
		}
		val = str(cs)
	case "require_secure_transport":
		if on, _ := types.ToBool(val); on && s.db.cfg.SSLCert == "" {
			return sqlerr.New(3757, "No secure transports (SSL or Shared Memory) are configured, unable to set --require_secure_transport=ON.")
		}
	case "kiln_durability":
		d := strings.ToLower(types.ToString(val))
		if d != "sync" && d != "async" {
			return sqlerr.New(sqlerr.ErrWrongValueForVar, "Variable 'kiln_durability' can't be set to the value of '%s'", d)
		}
		val = str(d)
	}
	if global {
		s.db.globals.set(v, val)
		if v.onSet != nil {
			v.onSet(s.db, val)
		}
		return nil
	}
	if v.name == "autocommit" {
		on, _ := types.ToBool(val)
		if on && s.txn != nil {
			// Turning autocommit on commits the open transaction.
			if err := s.commit(contextBackground()); err != nil {
				return err
			}
		}
	}
	if v.name == "tx_isolation" {
		s.vars["transaction_isolation"] = val
	}
	if v.name == "transaction_isolation" {
		s.vars["tx_isolation"] = val
	}
	s.vars[v.name] = val
	return nil
}

func parseSQLMode(m string) ([]string, error) {
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

// parseTimeZone accepts 'SYSTEM', '+HH:MM'/'-HH:MM' offsets and IANA names.
func parseTimeZone(tz string) (*time.Location, error) {
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

// set runs SET statements: system variables, user variables, NAMES, CHARACTER SET, TRANSACTION.
func (s *Session) set(env *Env, x *ast.SetStmt) error {
	for _, a := range x.Variables {
		name := strings.ToLower(a.Name)
		// The parser marks SET NAMES / SET CHARACTER SET as not system variables.
		isNames := name == strings.ToLower(ast.SetNames) || name == strings.ToLower(ast.SetCharset)
		if !a.IsSystem && !isNames {
			c := (&planner{s: s}).newCompiler(&scope{})
			e, err := c.compile(a.Value)
			if err != nil {
				return err
			}
			v, err := e.Eval(env, nil)
			if err != nil {
				return err
			}
			s.userVars[name] = v
			continue
		}
		switch name {
		case strings.ToLower(ast.SetNames), strings.ToLower(ast.SetCharset):
			cs := "utf8mb4"
			if v, ok := a.Value.(ast.ValueExpr); ok {
				cs = strings.ToLower(fmt.Sprint(v.GetValue()))
			}
			if cs == "default" {
				cs = "utf8mb4"
			}
			if cs == "utf8" {
				cs = "utf8mb3"
			}
			coll, ok := types.DefaultCollation(cs)
			if !ok {
				return sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", cs)
			}
			if a.ExtendValue != nil {
				if v, ok := a.ExtendValue.(ast.ValueExpr); ok {
					cn := strings.ToLower(fmt.Sprint(v.GetValue()))
					if c2, ok := types.LookupCollation(cn); ok {
						coll = c2
					} else {
						return sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", cn)
					}
				}
			}
			s.vars["character_set_client"] = str(cs)
			s.vars["character_set_results"] = str(cs)
			s.vars["character_set_connection"] = str(cs)
			s.vars["collation_connection"] = str(coll.Name)
			continue
		case "tx_isolation_one_shot", "transaction_isolation_one_shot":
			continue
		}
		var val types.Value
		if _, isDefault := a.Value.(*ast.DefaultExpr); isDefault || a.Value == nil {
			if v, ok := lookupSysVar(name); ok {
				if a.IsGlobal {
					val = v.def
				} else {
					val = s.db.globals.get(v)
				}
			}
		} else {
			c := (&planner{s: s}).newCompiler(&scope{})
			if cn, ok := a.Value.(*ast.ColumnNameExpr); ok {
				// SET x = ON / OFF / identifier: a bare word is a string.
				val = str(cn.Name.Name.O)
			} else {
				e, err := c.compile(a.Value)
				if err != nil {
					return err
				}
				if val, err = e.Eval(env, nil); err != nil {
					return err
				}
			}
		}
		if err := s.setSysVar(name, a.IsGlobal, val); err != nil {
			return err
		}
	}
	return nil
}
