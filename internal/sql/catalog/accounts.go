package catalog

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/kiln-db/kiln/internal/auth"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
)

// Accounts and privileges as stored (MySQL 8's model, without roles and column grants). The
// privilege checks and the account statements that change them are the facade's
// (internal/sql/acl_check.go, acl_stmt.go); this file defines what they read and write.
//
// Every account is one catalog record under 0x01 'a' <user> 0x00 <host> (JSON: plugin, stored hash,
// flags, and its global, database and table privileges), written through the commit path like any
// DDL, so accounts replicate through the log and a replica reloads them with its catalog. The
// marker 0x01 'A' says the accounts were initialised; a data directory without it (a new one, or
// one from before accounts existed) gets root@localhost without password and with every privilege
// WITH GRANT OPTION, as MySQL's --initialize-insecure does.

// Priv is a set of static privileges, with MySQL's bit order (sql/auth/auth_acls.h), which is also
// the order SHOW GRANTS lists them in. The bits are stored (Account's JSON): never renumber them.
type Priv uint64

// The static privileges.
const (
	PrivSelect Priv = 1 << iota
	PrivInsert
	PrivUpdate
	PrivDelete
	PrivCreate
	PrivDrop
	PrivReload
	PrivShutdown
	PrivProcess
	PrivFile
	PrivGrant
	PrivReferences
	PrivIndex
	PrivAlter
	PrivShowDB
	PrivSuper
	PrivCreateTmp
	PrivLockTables
	PrivExecute
	PrivReplSlave
	PrivReplClient
	PrivCreateView
	PrivShowView
	PrivCreateRoutine
	PrivAlterRoutine
	PrivCreateUser
	PrivEvent
	PrivTrigger
	PrivCreateTablespace
	PrivCreateRole
	PrivDropRole
	privEnd
)

// Privilege sets of each level (MySQL's GLOBAL_ACLS, DB_ACLS, TABLE_ACLS).
const (
	PrivAllGlobal = privEnd - 1
	PrivAllDB     = PrivSelect | PrivInsert | PrivUpdate | PrivDelete | PrivCreate | PrivDrop | PrivGrant |
		PrivReferences | PrivIndex | PrivAlter | PrivCreateTmp | PrivLockTables | PrivExecute |
		PrivCreateView | PrivShowView | PrivCreateRoutine | PrivAlterRoutine | PrivEvent | PrivTrigger
	PrivAllTable = PrivSelect | PrivInsert | PrivUpdate | PrivDelete | PrivCreate | PrivDrop | PrivGrant |
		PrivReferences | PrivIndex | PrivAlter | PrivCreateView | PrivShowView | PrivTrigger
)

// privNames are the privileges' names as GRANT and SHOW GRANTS spell them, in bit order.
var privNames = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "RELOAD", "SHUTDOWN",
	"PROCESS", "FILE", "GRANT OPTION", "REFERENCES", "INDEX", "ALTER", "SHOW DATABASES", "SUPER",
	"CREATE TEMPORARY TABLES", "LOCK TABLES", "EXECUTE", "REPLICATION SLAVE", "REPLICATION CLIENT",
	"CREATE VIEW", "SHOW VIEW", "CREATE ROUTINE", "ALTER ROUTINE", "CREATE USER", "EVENT", "TRIGGER",
	"CREATE TABLESPACE", "CREATE ROLE", "DROP ROLE"}

// PrivColumns are mysql.user's *_priv columns, in privilege bit order.
var PrivColumns = []string{"Select_priv", "Insert_priv", "Update_priv", "Delete_priv", "Create_priv",
	"Drop_priv", "Reload_priv", "Shutdown_priv", "Process_priv", "File_priv", "Grant_priv",
	"References_priv", "Index_priv", "Alter_priv", "Show_db_priv", "Super_priv", "Create_tmp_table_priv",
	"Lock_tables_priv", "Execute_priv", "Repl_slave_priv", "Repl_client_priv", "Create_view_priv",
	"Show_view_priv", "Create_routine_priv", "Alter_routine_priv", "Create_user_priv", "Event_priv",
	"Trigger_priv", "Create_tablespace_priv", "Create_role_priv", "Drop_role_priv"}

// DynamicPrivs are the MySQL 8 dynamic privileges Kiln accepts and stores, sorted (GRANT ALL ON
// *.* grants them all). SYSTEM_VARIABLES_ADMIN and CONNECTION_ADMIN are checked (SET GLOBAL,
// KILL); the others are kept for compatibility with tools that grant them.
var DynamicPrivs = []string{"APPLICATION_PASSWORD_ADMIN", "AUDIT_ADMIN", "BACKUP_ADMIN", "BINLOG_ADMIN",
	"BINLOG_ENCRYPTION_ADMIN", "CLONE_ADMIN", "CONNECTION_ADMIN", "ENCRYPTION_KEY_ADMIN",
	"FLUSH_OPTIMIZER_COSTS", "FLUSH_STATUS", "FLUSH_TABLES", "FLUSH_USER_RESOURCES",
	"GROUP_REPLICATION_ADMIN", "INNODB_REDO_LOG_ARCHIVE", "INNODB_REDO_LOG_ENABLE",
	"PASSWORDLESS_USER_ADMIN", "PERSIST_RO_VARIABLES_ADMIN", "REPLICATION_APPLIER",
	"REPLICATION_SLAVE_ADMIN", "RESOURCE_GROUP_ADMIN", "RESOURCE_GROUP_USER", "ROLE_ADMIN",
	"SENSITIVE_VARIABLES_OBSERVER", "SERVICE_CONNECTION_ADMIN", "SESSION_VARIABLES_ADMIN",
	"SET_USER_ID", "SHOW_ROUTINE", "SYSTEM_USER", "SYSTEM_VARIABLES_ADMIN", "TABLE_ENCRYPTION_ADMIN",
	"XA_RECOVER_ADMIN"}

// IsDynamicPriv reports whether name (upper-case) is a dynamic privilege Kiln knows.
func IsDynamicPriv(name string) bool {
	i := sort.SearchStrings(DynamicPrivs, name)
	return i < len(DynamicPrivs) && DynamicPrivs[i] == name
}

// Names lists the privileges of p in SHOW GRANTS order (GRANT OPTION excluded: it is a clause).
func (p Priv) Names() []string {
	var out []string
	for i, n := range privNames {
		if p&(1<<i) != 0 && Priv(1<<i) != PrivGrant {
			out = append(out, n)
		}
	}
	return out
}

// First returns the name of p's lowest privilege (the one MySQL's checks report first).
func (p Priv) First() string {
	for i, n := range privNames {
		if p&(1<<i) != 0 {
			return n
		}
	}
	return ""
}

// Account is one 'user'@'host' account with its privileges. The JSON field names are the stored
// form and never change. A published Account is never changed: statements change a Clone.
type Account struct {
	User       string `json:"user"`
	Host       string `json:"host"`
	Plugin     string `json:"plugin"`
	AuthString string `json:"auth_string"`
	SSLType    string `json:"ssl_type,omitempty"` // "" (REQUIRE NONE) or "ANY" (REQUIRE SSL)
	Locked     bool   `json:"locked,omitempty"`
	Global     Priv   `json:"global"`
	// Dynamic are the dynamic privileges granted ON *.*, upper-case, sorted; DynamicGrant those
	// of them WITH GRANT OPTION.
	Dynamic      []string `json:"dynamic,omitempty"`
	DynamicGrant []string `json:"dynamic_grant,omitempty"`
	// DBs are database-level grants by database name as granted; Tables table-level ones by
	// "db\x00table". Names compare case-insensitively, as Kiln's catalog does.
	DBs    map[string]Priv `json:"dbs,omitempty"`
	Tables map[string]Priv `json:"tables,omitempty"`

	// The lookups below are derived by Init from the stored fields and are not stored.
	dbl  map[string]Priv // lower-case db -> privileges
	tbl  map[string]Priv // lower-case "db\x00table" -> privileges
	tdbs map[string]bool // lower-case dbs with a table grant
}

// Init builds the derived lookups. Every Account is Init-ed before it is read: after it is
// decoded, built, or changed (Accounts.Put does it).
func (a *Account) Init() {
	a.dbl = make(map[string]Priv, len(a.DBs))
	for k, v := range a.DBs {
		a.dbl[strings.ToLower(k)] |= v
	}
	a.tbl = make(map[string]Priv, len(a.Tables))
	a.tdbs = map[string]bool{}
	for k, v := range a.Tables {
		a.tbl[strings.ToLower(k)] |= v
		if v != 0 {
			db, _, _ := strings.Cut(k, "\x00")
			a.tdbs[strings.ToLower(db)] = true
		}
	}
}

// Clone returns a deep copy (through its stored form) for a statement to change.
func (a *Account) Clone() *Account {
	b, err := json.Marshal(a)
	if err != nil {
		panic(fmt.Sprintf("catalog: clone account: %v", err))
	}
	var n Account
	if err := json.Unmarshal(b, &n); err != nil {
		panic(fmt.Sprintf("catalog: clone account: %v", err))
	}
	n.Init()
	return &n
}

// Name is the account as MySQL prints it in SHOW GRANTS: `user`@`host`.
func (a *Account) Name() string { return QuoteAccount(a.User, a.Host) }

// QuoteAccount prints an account as SHOW GRANTS and view definers do: `user`@`host`.
func QuoteAccount(user, host string) string {
	return "`" + strings.ReplaceAll(user, "`", "``") + "`@`" + strings.ReplaceAll(host, "`", "``") + "`"
}

// HasDynamic reports whether the account holds a dynamic privilege (upper-case name).
func (a *Account) HasDynamic(name string) bool {
	i := sort.SearchStrings(a.Dynamic, name)
	return i < len(a.Dynamic) && a.Dynamic[i] == name
}

// DBPrivs are the privileges the account has on every object of a database.
func (a *Account) DBPrivs(db string) Priv {
	return a.Global | a.dbl[strings.ToLower(db)]
}

// TablePrivs are the privileges the account has on a table.
func (a *Account) TablePrivs(db, table string) Priv {
	return a.DBPrivs(db) | a.tbl[strings.ToLower(db)+"\x00"+strings.ToLower(table)]
}

// AnyInDB reports whether the account has any privilege on the database or on something in it
// (what USE, SHOW TABLES and listings need).
func (a *Account) AnyInDB(db string) bool {
	return a.DBPrivs(db)&^PrivGrant != 0 || a.tdbs[strings.ToLower(db)]
}

// Accounts is the catalog's set of accounts, in MySQL's matching order. Like the Catalog it is
// published with, a published set is never changed: account statements change a Copy.
type Accounts struct {
	list  []*Account
	byKey map[string]*Account // accountKey
	// initialised: the accounts marker is in storage. Without it the set holds the implied
	// root@localhost, which the first account statement writes out (WriteInit).
	initialised bool
}

func accountKey(user, host string) string { return user + "\x00" + strings.ToLower(host) }

// NewAccounts returns an empty set, not yet initialised in storage.
func NewAccounts() *Accounts { return &Accounts{byKey: map[string]*Account{}} }

// Copy returns a copy that may be changed; the accounts themselves are shared.
func (l *Accounts) Copy() *Accounts {
	n := &Accounts{byKey: make(map[string]*Account, len(l.byKey)), initialised: l.initialised}
	for k, v := range l.byKey {
		n.byKey[k] = v
	}
	n.sort()
	return n
}

// Initialised reports whether the accounts marker is in storage.
func (l *Accounts) Initialised() bool { return l.initialised }

// All returns the accounts in matching order; the caller must not change the slice.
func (l *Accounts) All() []*Account { return l.list }

// Get returns account user@host (the host compares case-insensitively).
func (l *Accounts) Get(user, host string) (*Account, bool) {
	a, ok := l.byKey[accountKey(user, host)]
	return a, ok
}

// Put adds or replaces an account (Init-ing it).
func (l *Accounts) Put(a *Account) {
	a.Init()
	l.byKey[accountKey(a.User, a.Host)] = a
	l.sort()
}

// Remove removes an account.
func (l *Accounts) Remove(user, host string) {
	delete(l.byKey, accountKey(user, host))
	l.sort()
}

// sort orders the accounts as MySQL matches them: the most specific host first (a literal host
// or IP before a pattern, a pattern with more characters before its first wildcard before one
// with fewer, '%' last), then a named user before the anonymous one.
func (l *Accounts) sort() {
	l.list = l.list[:0]
	for _, a := range l.byKey {
		l.list = append(l.list, a)
	}
	sort.Slice(l.list, func(i, j int) bool {
		a, b := l.list[i], l.list[j]
		if ra, rb := hostRank(a.Host), hostRank(b.Host); ra != rb {
			return ra > rb
		}
		if (a.User == "") != (b.User == "") {
			return a.User != ""
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		return a.User < b.User
	})
}

// hostRank is how specific a host pattern is (higher matches first).
func hostRank(h string) int {
	i := strings.IndexAny(h, "%_")
	if i < 0 {
		return 1 << 20
	}
	return i
}

// Match finds the account a login of user from host (the client's IP address) authenticates as.
func (l *Accounts) Match(user, host string) (*Account, bool) {
	for _, a := range l.list {
		if (a.User == user || a.User == "") && hostMatches(a.Host, host) {
			return a, true
		}
	}
	return nil, false
}

// hostMatches matches a client address against an account's host pattern: 'localhost' is a
// loopback connection, '%' and '_' are LIKE wildcards, anything else compares exactly
// (case-insensitively).
func hostMatches(pattern, host string) bool {
	pattern = strings.ToLower(pattern)
	if pattern == "localhost" {
		if host == "localhost" {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return likeMatch(pattern, strings.ToLower(host))
}

func likeMatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeMatch(p, s[i:]) {
					return true
				}
			}
			return false
		case '_':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	return s == ""
}

// SaveAccount writes an account.
func SaveAccount(w Writer, a *Account) error {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("catalog: encode account %s: %w", a.Name(), err)
	}
	w.Set(rowenc.AccountKey(a.User, a.Host), b)
	return nil
}

// DeleteAccount removes an account's record.
func DeleteAccount(w Writer, user, host string) { w.Delete(rowenc.AccountKey(user, host)) }

// BootstrapRoot is the initial account: root@localhost, no password, every privilege WITH GRANT
// OPTION (static and dynamic).
func BootstrapRoot() *Account {
	a := &Account{User: "root", Host: "localhost", Plugin: auth.CachingSHA2Password, Global: PrivAllGlobal,
		Dynamic: append([]string(nil), DynamicPrivs...), DynamicGrant: append([]string(nil), DynamicPrivs...)}
	a.Init()
	return a
}

// WriteInit writes the accounts marker and, for a store that never had accounts, the implied
// root (the set holds it already); a set already initialised writes nothing. It marks the set
// initialised: call it on a Copy that is published once w commits.
func (l *Accounts) WriteInit(w Writer) error {
	if l.initialised {
		return nil
	}
	w.Set(rowenc.ACLInitKey(), []byte{1})
	for _, a := range l.list {
		if err := SaveAccount(w, a); err != nil {
			return err
		}
	}
	l.initialised = true
	return nil
}

// LoadAccounts reads the stored accounts (get and scan as for Load). A store without the accounts
// marker and without accounts holds the implied root@localhost.
func LoadAccounts(get func(key []byte) ([]byte, bool, error), scan func(lo, hi []byte, fn func(k, v []byte) error) error) (*Accounts, error) {
	l := NewAccounts()
	_, ok, err := get(rowenc.ACLInitKey())
	if err != nil {
		return nil, err
	}
	l.initialised = ok
	lo, hi := rowenc.AccountSpan()
	if err := scan(lo, hi, func(k, v []byte) error {
		var a Account
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("catalog: account %q: %w", k, err)
		}
		a.Init()
		l.byKey[accountKey(a.User, a.Host)] = &a
		return nil
	}); err != nil {
		return nil, err
	}
	if !l.initialised && len(l.byKey) == 0 {
		r := BootstrapRoot()
		l.byKey[accountKey(r.User, r.Host)] = r
	}
	l.sort()
	return l, nil
}
