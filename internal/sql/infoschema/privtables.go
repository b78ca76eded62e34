package infoschema

import (
	"slices"
	"sort"
	"strings"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// The grant tables (mysql.user, mysql.db, mysql.tables_priv) and the information_schema privilege
// tables, served from the accounts, and the filtering of listings by the session's privileges.
// Whether a statement may run at all is the facade's check (acl_check.go); this file only decides
// which rows a permitted listing shows.

// enumYN is the value of the grant tables' ENUM('N','Y') columns (Select_priv, account_locked, ...).
func enumYN(b bool) types.Value {
	if b {
		return stringVal("Y")
	}
	return stringVal("N")
}

// grantTable returns mysql.user, mysql.db or mysql.tables_priv, or false.
func grantTable(s Session, name string) (Table, bool) {
	l := s.Catalog().Accounts
	switch strings.ToLower(name) {
	case "user":
		cols := []Col{StringCol("Host"), StringCol("User")}
		for _, c := range catalog.PrivColumns {
			cols = append(cols, StringCol(c))
		}
		cols = append(cols, StringCol("ssl_type"), StringCol("ssl_cipher"), StringCol("x509_issuer"), StringCol("x509_subject"),
			IntCol("max_questions"), IntCol("max_updates"), IntCol("max_connections"), IntCol("max_user_connections"),
			StringCol("plugin"), StringCol("authentication_string"), StringCol("password_expired"), StringCol("password_last_changed"),
			IntCol("password_lifetime"), StringCol("account_locked"), StringCol("Password_reuse_history"), StringCol("Password_reuse_time"),
			StringCol("Password_require_current"), StringCol("User_attributes"))
		return table(cols, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, a := range sortedAccounts(l) {
				r := []types.Value{stringVal(a.Host), stringVal(a.User)}
				for i := range catalog.PrivColumns {
					r = append(r, enumYN(a.Global&(1<<i) != 0))
				}
				r = append(r, stringVal(a.SSLType), stringVal(""), stringVal(""), stringVal(""), intVal(0), intVal(0), intVal(0), intVal(0),
					stringVal(a.Plugin), stringVal(a.AuthString), stringVal("N"), types.Null, types.Null, enumYN(a.Locked),
					types.Null, types.Null, types.Null, types.Null)
				rows = append(rows, r)
			}
			return rows, nil
		}), true
	case "db":
		dbBits := []catalog.Priv{catalog.PrivSelect, catalog.PrivInsert, catalog.PrivUpdate, catalog.PrivDelete, catalog.PrivCreate, catalog.PrivDrop, catalog.PrivGrant,
			catalog.PrivReferences, catalog.PrivIndex, catalog.PrivAlter, catalog.PrivCreateTmp, catalog.PrivLockTables, catalog.PrivCreateView, catalog.PrivShowView,
			catalog.PrivCreateRoutine, catalog.PrivAlterRoutine, catalog.PrivExecute, catalog.PrivEvent, catalog.PrivTrigger}
		cols := []Col{StringCol("Host"), StringCol("Db"), StringCol("User")}
		for _, b := range dbBits {
			cols = append(cols, StringCol(catalog.PrivColumns[bitIndex(b)]))
		}
		return table(cols, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, a := range sortedAccounts(l) {
				for _, d := range sortedKeys(a.DBs) {
					r := []types.Value{stringVal(a.Host), stringVal(d), stringVal(a.User)}
					for _, b := range dbBits {
						r = append(r, enumYN(a.DBs[d]&b != 0))
					}
					rows = append(rows, r)
				}
			}
			return rows, nil
		}), true
	case "tables_priv":
		cols := []Col{StringCol("Host"), StringCol("Db"), StringCol("User"), StringCol("Table_name"), StringCol("Grantor"), StringCol("Timestamp"), StringCol("Table_priv"), StringCol("Column_priv")}
		return table(cols, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, a := range sortedAccounts(l) {
				for _, k := range sortedKeys(a.Tables) {
					d, t, _ := strings.Cut(k, "\x00")
					rows = append(rows, []types.Value{stringVal(a.Host), stringVal(d), stringVal(a.User), stringVal(t), stringVal(""), types.Null,
						stringVal(tablePrivSet(a.Tables[k])), stringVal("")})
				}
			}
			return rows, nil
		}), true
	}
	return Table{}, false
}

func bitIndex(p catalog.Priv) int {
	for i := 0; i < 64; i++ {
		if p == 1<<i {
			return i
		}
	}
	return -1
}

// tablePrivSet is mysql.tables_priv.Table_priv's SET value ('Select,Insert,...').
func tablePrivSet(p catalog.Priv) string {
	names := []struct {
		p catalog.Priv
		n string
	}{{catalog.PrivSelect, "Select"}, {catalog.PrivInsert, "Insert"}, {catalog.PrivUpdate, "Update"}, {catalog.PrivDelete, "Delete"},
		{catalog.PrivCreate, "Create"}, {catalog.PrivDrop, "Drop"}, {catalog.PrivGrant, "Grant"}, {catalog.PrivReferences, "References"},
		{catalog.PrivIndex, "Index"}, {catalog.PrivAlter, "Alter"}, {catalog.PrivCreateView, "Create View"}, {catalog.PrivShowView, "Show view"},
		{catalog.PrivTrigger, "Trigger"}}
	var out []string
	for _, x := range names {
		if p&x.p != 0 {
			out = append(out, x.n)
		}
	}
	return strings.Join(out, ",")
}

func sortedAccounts(l *catalog.Accounts) []*catalog.Account {
	out := append([]*catalog.Account(nil), l.All()...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		return out[i].User < out[j].User
	})
	return out
}

func sortedKeys(m map[string]catalog.Priv) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// privTable returns information_schema.USER_PRIVILEGES, SCHEMA_PRIVILEGES or TABLE_PRIVILEGES:
// the session's own account's grants, or everyone's with SELECT on the mysql schema.
func privTable(s Session, name string) (Table, bool) {
	l := s.Catalog().Accounts
	all := s.AccountGrants().AnyInDB("mysql")
	user, host := s.Account()
	var accts []*catalog.Account
	for _, a := range sortedAccounts(l) {
		if all || (a.User == user && strings.EqualFold(a.Host, host)) {
			accts = append(accts, a)
		}
	}
	grantee := func(a *catalog.Account) types.Value { return stringVal("'" + a.User + "'@'" + a.Host + "'") }
	grantable := func(p catalog.Priv) types.Value {
		if p&catalog.PrivGrant != 0 {
			return stringVal("YES")
		}
		return stringVal("NO")
	}
	switch strings.ToUpper(name) {
	case "USER_PRIVILEGES":
		return table([]Col{StringCol("GRANTEE"), StringCol("TABLE_CATALOG"), StringCol("PRIVILEGE_TYPE"), StringCol("IS_GRANTABLE")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, a := range accts {
				names := a.Global.Names()
				if len(names) == 0 {
					names = []string{"USAGE"}
				}
				for _, n := range names {
					rows = append(rows, []types.Value{grantee(a), stringVal("def"), stringVal(n), grantable(a.Global)})
				}
				for _, d := range a.Dynamic {
					rows = append(rows, []types.Value{grantee(a), stringVal("def"), stringVal(d), yesNoValue(slices.Contains(a.DynamicGrant, d))})
				}
			}
			return rows, nil
		}), true
	case "SCHEMA_PRIVILEGES":
		return table([]Col{StringCol("GRANTEE"), StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("PRIVILEGE_TYPE"), StringCol("IS_GRANTABLE")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, a := range accts {
				for _, d := range sortedKeys(a.DBs) {
					for _, n := range a.DBs[d].Names() {
						rows = append(rows, []types.Value{grantee(a), stringVal("def"), stringVal(d), stringVal(n), grantable(a.DBs[d])})
					}
				}
			}
			return rows, nil
		}), true
	case "TABLE_PRIVILEGES":
		return table([]Col{StringCol("GRANTEE"), StringCol("TABLE_CATALOG"), StringCol("TABLE_SCHEMA"), StringCol("TABLE_NAME"), StringCol("PRIVILEGE_TYPE"), StringCol("IS_GRANTABLE")}, func(*expr.Env) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, a := range accts {
				for _, k := range sortedKeys(a.Tables) {
					d, t, _ := strings.Cut(k, "\x00")
					for _, n := range a.Tables[k].Names() {
						rows = append(rows, []types.Value{grantee(a), stringVal("def"), stringVal(d), stringVal(t), stringVal(n), grantable(a.Tables[k])})
					}
				}
			}
			return rows, nil
		}), true
	}
	return Table{}, false
}

func yesNoValue(b bool) types.Value {
	if b {
		return stringVal("YES")
	}
	return stringVal("NO")
}

// filterListing wraps an information_schema table so that it lists only what the session may see:
// rows of schemas and tables it has privileges on (by the TABLE_SCHEMA / SCHEMA_NAME and
// TABLE_NAME columns), and for PROCESSLIST only its own user's threads without PROCESS.
func filterListing(s Session, name string, pl Table) Table {
	if pl.Rows == nil || s.AllPrivileged() {
		return pl
	}
	schemaCol, tableCol, userCol := -1, -1, -1
	for i, c := range pl.Cols {
		switch strings.ToUpper(c.Name) {
		case "TABLE_SCHEMA", "SCHEMA_NAME":
			if schemaCol < 0 {
				schemaCol = i
			}
		case "TABLE_NAME":
			tableCol = i
		case "USER":
			userCol = i
		}
	}
	up := strings.ToUpper(name)
	if up == "PROCESSLIST" {
		if s.CanSeeAllProcesses() {
			return pl
		}
		schemaCol, tableCol = -1, -1
	} else {
		userCol = -1
	}
	if up == "USER_PRIVILEGES" || up == "SCHEMA_PRIVILEGES" || up == "TABLE_PRIVILEGES" {
		return pl // filtered by grantee when built
	}
	if schemaCol < 0 && userCol < 0 {
		return pl
	}
	inner := pl.Rows
	pl.Rows = func(env *expr.Env) ([][]types.Value, error) {
		rows, err := inner(env)
		if err != nil {
			return nil, err
		}
		out := rows[:0]
		for _, r := range rows {
			if userCol >= 0 {
				if types.ToString(r[userCol]) != s.SessionUser() {
					continue
				}
			} else {
				db := types.ToString(r[schemaCol])
				if strings.EqualFold(db, "information_schema") {
					out = append(out, r)
					continue
				}
				if tableCol >= 0 && !r[tableCol].IsNull() {
					if !s.VisibleTable(db, types.ToString(r[tableCol])) {
						continue
					}
				} else if !s.VisibleDB(db) {
					continue
				}
			}
			out = append(out, r)
		}
		return out, nil
	}
	return pl
}
