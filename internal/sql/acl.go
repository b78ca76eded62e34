package sql

import (
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
)

// Accounts and privileges: the definitions, their matching order and their load/save are
// internal/sql/catalog's (accounts.go); the checks are acl_check.go's, the statements
// acl_stmt.go's, the grant tables internal/sql/infoschema's (privtables.go). What is left here is the glue between the
// catalog's accounts and the parser and the protocol layer.

// privOf maps the parser's privilege types to the catalog's.
var privOf = map[pmysql.PrivilegeType]catalog.Priv{
	pmysql.SelectPriv: catalog.PrivSelect, pmysql.InsertPriv: catalog.PrivInsert, pmysql.UpdatePriv: catalog.PrivUpdate,
	pmysql.DeletePriv: catalog.PrivDelete, pmysql.CreatePriv: catalog.PrivCreate, pmysql.DropPriv: catalog.PrivDrop,
	pmysql.ReloadPriv: catalog.PrivReload, pmysql.ShutdownPriv: catalog.PrivShutdown, pmysql.ProcessPriv: catalog.PrivProcess,
	pmysql.FilePriv: catalog.PrivFile, pmysql.GrantPriv: catalog.PrivGrant, pmysql.ReferencesPriv: catalog.PrivReferences,
	pmysql.IndexPriv: catalog.PrivIndex, pmysql.AlterPriv: catalog.PrivAlter, pmysql.ShowDBPriv: catalog.PrivShowDB,
	pmysql.SuperPriv: catalog.PrivSuper, pmysql.CreateTMPTablePriv: catalog.PrivCreateTmp, pmysql.LockTablesPriv: catalog.PrivLockTables,
	pmysql.ExecutePriv: catalog.PrivExecute, pmysql.ReplicationSlavePriv: catalog.PrivReplSlave,
	pmysql.ReplicationClientPriv: catalog.PrivReplClient, pmysql.CreateViewPriv: catalog.PrivCreateView,
	pmysql.ShowViewPriv: catalog.PrivShowView, pmysql.CreateRoutinePriv: catalog.PrivCreateRoutine,
	pmysql.AlterRoutinePriv: catalog.PrivAlterRoutine, pmysql.CreateUserPriv: catalog.PrivCreateUser,
	pmysql.EventPriv: catalog.PrivEvent, pmysql.TriggerPriv: catalog.PrivTrigger,
	pmysql.CreateTablespacePriv: catalog.PrivCreateTablespace, pmysql.CreateRolePriv: catalog.PrivCreateRole,
	pmysql.DropRolePriv: catalog.PrivDropRole,
}

// errName is the account as MySQL prints it in error messages: 'user'@'host'.
func errName(user, host string) string { return "'" + user + "'@'" + host + "'" }

// protoAccount is what the protocol layer's authentication needs of an account.
func protoAccount(a *catalog.Account) proto.Account {
	return proto.Account{User: a.User, Host: a.Host, Plugin: a.Plugin, AuthString: a.AuthString,
		RequireSSL: a.SSLType != "", Locked: a.Locked}
}

// LookupAccount finds the account a login of user from host (the client's IP address) matches,
// for the protocol layer's authentication.
func (db *DB) LookupAccount(user, host string) (proto.Account, bool) {
	// A replica's accounts change through the log: reload the catalog if it changed.
	_ = db.syncCluster()
	a, ok := db.Catalog().Accounts.Match(user, host)
	if !ok {
		return proto.Account{}, false
	}
	return protoAccount(a), true
}
