package sql

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// The system variables' definitions and validation are in sysvar; their values are here: the
// server's globals (globalVars) and each session's (Session.vars).

// globalVars holds the server's global values. Every statement reads several of them and SET GLOBAL
// is rare, so the map is copied on write and published whole: a read is an atomic load and a map
// lookup, without a lock shared by every session.
type globalVars struct {
	mu   sync.Mutex // serialises writers
	vals atomic.Pointer[map[string]types.Value]
}

func newGlobalVars(cfg Config) *globalVars {
	vals := map[string]types.Value{}
	vals["version"] = stringVal(cfg.Version)
	if cfg.MaxConnections > 0 {
		vals["max_connections"] = intVal(int64(cfg.MaxConnections))
	}
	vals["innodb_lock_wait_timeout"] = intVal(int64(cfg.LockWaitTimeout / time.Second))
	if cfg.Durability != "" {
		vals["kiln_durability"] = stringVal(cfg.Durability)
	}
	if cfg.BeforeImages {
		vals["kiln_log_before_images"] = intVal(1)
	}
	vals["kiln_early_lock_release"] = intVal(0)
	if cfg.EarlyLockRelease {
		vals["kiln_early_lock_release"] = intVal(1)
	}
	vals["secure_file_priv"] = secureFilePrivValue(cfg)
	if cfg.SSLCert != "" {
		vals["have_ssl"], vals["have_openssl"] = stringVal("YES"), stringVal("YES")
		vals["ssl_ca"], vals["ssl_cert"], vals["ssl_key"] = stringVal(cfg.SSLCA), stringVal(cfg.SSLCert), stringVal(cfg.SSLKey)
		vals["tls_version"] = stringVal("TLSv1.2,TLSv1.3")
	}
	if cfg.RequireSecureTransport {
		vals["require_secure_transport"] = intVal(1)
	}
	g := &globalVars{}
	g.vals.Store(&vals)
	return g
}

func (g *globalVars) get(v *sysvar.Var) types.Value {
	if x, ok := (*g.vals.Load())[v.Name]; ok {
		return x
	}
	return v.Default
}

func (g *globalVars) set(v *sysvar.Var, x types.Value) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := *g.vals.Load()
	vals := make(map[string]types.Value, len(old)+1)
	for k, val := range old {
		vals[k] = val
	}
	vals[v.Name] = x
	g.vals.Store(&vals)
}

// GlobalInt reads an integer global (the server reads max_connections through it).
func (db *DB) GlobalInt(name string) int64 {
	v, ok := sysvar.Lookup(name)
	if !ok {
		return 0
	}
	return types.ToIntLenient(db.globals.get(v))
}

func (s *Session) getSysVar(v *sysvar.Var, global bool) types.Value {
	switch v.Name {
	case "warning_count":
		return intVal(int64(len(s.warnings)))
	case "error_count":
		n := 0
		for _, w := range s.warnings {
			if w.Level == "Error" {
				n++
			}
		}
		return intVal(int64(n))
	case "last_insert_id", "identity":
		return types.NewUint(s.lastInsertID)
	case "read_only", "super_read_only":
		if s.db.readOnlyNow() {
			return intVal(1)
		}
	case "gtid_executed", "server_uuid":
		if x, ok := s.gtidSysVar(v.Name); ok {
			return x
		}
	}
	if !global && v.Scope != sysvar.Global {
		if x, ok := s.vars[v.Name]; ok {
			return x
		}
	}
	return s.db.globals.get(v)
}

// globalSetEffects are what a SET GLOBAL of a variable does to the server besides storing it.
var globalSetEffects = map[string]func(db *DB, v types.Value){
	"innodb_deadlock_detect":  func(db *DB, val types.Value) { b, _ := types.ToBool(val); db.setDeadlockDetect(b) },
	"kiln_early_lock_release": func(db *DB, val types.Value) { b, _ := types.ToBool(val); db.txm.SetEarlyRelease(b) },
}

// setSysVar validates (sysvar.Validate) and assigns a system variable.
func (s *Session) setSysVar(name string, global bool, val types.Value) error {
	v, val, warn, err := sysvar.Validate(name, global, val)
	if err != nil {
		return err
	}
	if v.Name == "require_secure_transport" {
		if on, _ := types.ToBool(val); on && s.db.cfg.SSLCert == "" {
			return sqlerr.New(sqlerr.ErrNoSecureTransportsConfigured, "No secure transports (SSL or Shared Memory) are configured, unable to set --require_secure_transport=ON.")
		}
	}
	if v.Name == "kiln_read_after_gtid" {
		if err := s.checkReadAfterGTID(val); err != nil {
			return err
		}
	}
	if warn != nil {
		s.addWarning(warn.Level, warn.Code, warn.Message)
	}
	if global {
		s.db.globals.set(v, val)
		if f := globalSetEffects[v.Name]; f != nil {
			f(s.db, val)
		}
		return nil
	}
	if v.Name == "autocommit" {
		on, _ := types.ToBool(val)
		if on && s.txn != nil {
			// Turning autocommit on commits the open transaction.
			if err := s.commit(contextBackground()); err != nil {
				return err
			}
		}
	}
	if v.Name == "tx_isolation" {
		s.vars["transaction_isolation"] = val
	}
	if v.Name == "transaction_isolation" {
		s.vars["tx_isolation"] = val
	}
	s.vars[v.Name] = val
	s.varsGen++
	return nil
}

// set runs SET statements: system variables, user variables, NAMES, CHARACTER SET, TRANSACTION.
func (s *Session) set(env *expr.Env, x *ast.SetStmt) error {
	for _, a := range x.Variables {
		name := strings.ToLower(a.Name)
		// The parser marks SET NAMES / SET CHARACTER SET as not system variables.
		isNames := name == strings.ToLower(ast.SetNames) || name == strings.ToLower(ast.SetCharset)
		if !a.IsSystem && !isNames {
			e, err := s.compileExpr(a.Value)
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
			s.vars["character_set_client"] = stringVal(cs)
			s.vars["character_set_results"] = stringVal(cs)
			s.vars["character_set_connection"] = stringVal(cs)
			s.vars["collation_connection"] = stringVal(coll.Name)
			s.varsGen++
			continue
		case "tx_isolation_one_shot", "transaction_isolation_one_shot":
			continue
		}
		var val types.Value
		if _, isDefault := a.Value.(*ast.DefaultExpr); isDefault || a.Value == nil {
			if v, ok := sysvar.Lookup(name); ok {
				if a.IsGlobal {
					val = v.Default
				} else {
					val = s.db.globals.get(v)
				}
			}
		} else {
			if cn, ok := a.Value.(*ast.ColumnNameExpr); ok {
				// SET x = ON / OFF / identifier: a bare word is a string.
				val = stringVal(cn.Name.Name.O)
			} else {
				e, err := s.compileExpr(a.Value)
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
