package sql

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/auth"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	kauth "github.com/kiln-db/kiln/internal/auth"
	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Account statements: CREATE/ALTER/DROP/RENAME USER, SET PASSWORD, GRANT, REVOKE (written through
// the commit path as catalog records, catalog/accounts.go), SHOW GRANTS and FLUSH PRIVILEGES.

const (
	maxUserNameLen = 32
	maxHostNameLen = 255
)

// aclChange is one account statement's work: it edits next (a copy of the accounts) and writes
// each changed account through t.
type aclChange struct {
	s       *Session
	next    *catalog.Accounts
	t       *txn.Txn
	flushed [][2]string // accounts whose caching_sha2_password cache entry goes
}

func (c *aclChange) save(a *catalog.Account) error {
	c.next.Put(a)
	return catalog.SaveAccount(c.t, a)
}

func (c *aclChange) drop(user, host string) {
	c.next.Remove(user, host)
	catalog.DeleteAccount(c.t, user, host)
	c.flushed = append(c.flushed, [2]string{user, host})
}

// runACL runs an account statement: an implicit commit (as DDL), then one transaction that
// writes the changed accounts, committed before the new accounts are visible. Under
// kiln_commit_ack = applied the OK waits as a COMMIT's does (commitack.go), outside the DDL mutex.
func (s *Session) runACL(env *expr.Env, st ast.StmtNode, w proto.ResultWriter, more bool) error {
	if err := s.commit(env.Ctx); err != nil {
		return err
	}
	pos, err := s.applyACL(env, st)
	if err != nil {
		return err
	}
	if err := s.ackApplied(env.Ctx, pos); err != nil {
		return err
	}
	return w.OK(proto.OK{Warnings: s.warningCount()}, more)
}

// applyACL is runACL under the DDL mutex; it returns the commit's log index.
func (s *Session) applyACL(env *expr.Env, st ast.StmtNode) (uint64, error) {
	db := s.db
	db.ddlMu.Lock()
	defer db.ddlMu.Unlock()
	cur := db.Catalog()
	next := cur.Copy()
	accounts := cur.Accounts.Copy()
	next.Accounts = accounts
	t := db.txm.Begin(txn.RepeatableRead, false)
	c := &aclChange{s: s, next: accounts, t: t}
	if err := accounts.WriteInit(t); err != nil {
		t.Rollback()
		return 0, err
	}
	var err error
	switch x := st.(type) {
	case *ast.CreateUserStmt:
		err = c.createUser(x)
	case *ast.DropUserStmt:
		err = c.dropUser(x)
	case *ast.AlterUserStmt:
		err = c.alterUser(x)
	case *ast.RenameUserStmt:
		err = c.renameUser(x)
	case *ast.SetPwdStmt:
		err = c.setPassword(x)
	case *ast.GrantStmt:
		err = c.grant(x)
	case *ast.RevokeStmt:
		err = c.revoke(x)
	}
	if err != nil {
		t.Rollback()
		return 0, err
	}
	pos, err := t.Commit(env.Ctx)
	if err != nil {
		return 0, commitError(err)
	}
	s.lastPos = pos
	db.cat.Store(next)
	if f := db.cfg.FlushAuthCache; f != nil {
		for _, a := range c.flushed {
			f(a[0], a[1])
		}
	}
	return pos, nil
}

// userOf resolves a user in a statement: CURRENT_USER is the session's account.
func (c *aclChange) userOf(u *auth.UserIdentity) (string, string) {
	if u == nil || u.CurrentUser {
		return c.s.acctUser, c.s.acctHost
	}
	return u.Username, u.Hostname
}

func checkUserName(user, host string) error {
	if len([]rune(user)) > maxUserNameLen {
		return sqlerr.New(sqlerr.ErrWrongStringLength, "String '%s' is too long for user name (should be no longer than %d)", user, maxUserNameLen)
	}
	if len(host) > maxHostNameLen {
		return sqlerr.New(sqlerr.ErrWrongStringLength, "String '%s' is too long for host name (should be no longer than %d)", host, maxHostNameLen)
	}
	if strings.ContainsRune(user, 0) || strings.ContainsRune(host, 0) {
		return sqlerr.New(sqlerr.ErrCannotUser, "Operation CREATE USER failed for %s", errName(user, host))
	}
	return nil
}

func notSupported(what string) error {
	return sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of Kiln doesn't yet support '%s'", what)
}

// applyAuth sets an account's plugin and password from IDENTIFIED [WITH plugin] [BY 'pw' | AS 'hash'].
func applyAuth(a *catalog.Account, opt *ast.AuthOption) error {
	if opt == nil {
		return nil
	}
	plugin := a.Plugin
	if opt.AuthPlugin != "" {
		plugin = strings.ToLower(opt.AuthPlugin)
	}
	if plugin == "" {
		plugin = kauth.CachingSHA2Password // default_authentication_plugin
	}
	if plugin != kauth.CachingSHA2Password && plugin != kauth.NativePassword {
		return sqlerr.New(sqlerr.ErrPluginIsNotLoaded, "Plugin '%s' is not loaded", opt.AuthPlugin)
	}
	var hash string
	switch {
	case opt.ByAuthString:
		h, err := hashPassword(plugin, opt.AuthString)
		if err != nil {
			return err
		}
		hash = h
	case opt.ByHashString:
		if !kauth.ValidStored(plugin, opt.HashString) {
			return sqlerr.New(sqlerr.ErrPasswordFormat, "The password hash doesn't have the expected format.")
		}
		hash = opt.HashString
	default:
		// IDENTIFIED WITH plugin alone: the plugin changes, the password becomes empty.
	}
	a.Plugin, a.AuthString = plugin, hash
	return nil
}

func hashPassword(plugin, pw string) (string, error) {
	if plugin == kauth.NativePassword {
		return kauth.NativeHash(pw), nil
	}
	h, err := kauth.CachingSHA2Hash(pw)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// applyOptions applies REQUIRE and ACCOUNT LOCK/UNLOCK; what Kiln does not implement is refused.
func applyOptions(a *catalog.Account, tls []*ast.AuthTokenOrTLSOption, res []*ast.ResourceOption, pl []*ast.PasswordOrLockOption, comment *ast.CommentOrAttributeOption) error {
	for _, o := range tls {
		switch o.Type {
		case ast.TlsNone:
			a.SSLType = ""
		case ast.Ssl:
			a.SSLType = "ANY"
		default:
			return notSupported("REQUIRE " + o.Type.String())
		}
	}
	if len(res) > 0 {
		return notSupported("resource limits (WITH MAX_...)")
	}
	for _, o := range pl {
		switch o.Type {
		case ast.Lock:
			a.Locked = true
		case ast.Unlock:
			a.Locked = false
		case ast.PasswordExpireDefault, ast.PasswordExpireNever:
			// The default, and what Kiln does: passwords do not expire.
		default:
			return notSupported("password expiry, history, reuse and failed-login options")
		}
	}
	if comment != nil {
		return notSupported("user COMMENT and ATTRIBUTE")
	}
	return nil
}

func failed(op string, names []string) error {
	return sqlerr.New(sqlerr.ErrCannotUser, "Operation %s failed for %s", op, strings.Join(names, ","))
}

func (c *aclChange) createUser(x *ast.CreateUserStmt) error {
	if x.IsCreateRole {
		return notSupported("CREATE ROLE")
	}
	if err := c.s.requireGlobal(catalog.PrivCreateUser); err != nil {
		return err
	}
	var bad []string
	for _, spec := range x.Specs {
		user, host := spec.User.Username, spec.User.Hostname
		if err := checkUserName(user, host); err != nil {
			return err
		}
		if _, ok := c.next.Get(user, host); ok {
			if x.IfNotExists {
				c.s.addWarning("Note", sqlerr.ErrUserAlreadyExists, fmt.Sprintf("Authorization ID %s already exists.", errName(user, host)))
				continue
			}
			bad = append(bad, errName(user, host))
			continue
		}
		a := &catalog.Account{User: user, Host: host, Plugin: kauth.CachingSHA2Password}
		if err := applyAuth(a, spec.AuthOpt); err != nil {
			return err
		}
		if err := applyOptions(a, x.AuthTokenOrTLSOptions, x.ResourceOptions, x.PasswordOrLockOptions, x.CommentOrAttributeOption); err != nil {
			return err
		}
		if err := c.save(a); err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return failed("CREATE USER", bad)
	}
	return nil
}

func (c *aclChange) dropUser(x *ast.DropUserStmt) error {
	if x.IsDropRole {
		return notSupported("DROP ROLE")
	}
	if err := c.s.requireGlobal(catalog.PrivCreateUser); err != nil {
		return err
	}
	var bad []string
	for _, u := range x.UserList {
		user, host := c.userOf(u)
		if _, ok := c.next.Get(user, host); !ok {
			if x.IfExists {
				c.s.addWarning("Note", sqlerr.ErrUserDoesNotExist, fmt.Sprintf("Authorization ID %s does not exist.", errName(user, host)))
				continue
			}
			bad = append(bad, errName(user, host))
			continue
		}
		c.drop(user, host)
	}
	if len(bad) > 0 {
		return failed("DROP USER", bad)
	}
	return nil
}

func (c *aclChange) renameUser(x *ast.RenameUserStmt) error {
	if err := c.s.requireGlobal(catalog.PrivCreateUser); err != nil {
		return err
	}
	var bad []string
	for _, r := range x.UserToUsers {
		ou, oh := c.userOf(r.OldUser)
		nu, nh := r.NewUser.Username, r.NewUser.Hostname
		if err := checkUserName(nu, nh); err != nil {
			return err
		}
		old, ok := c.next.Get(ou, oh)
		if _, taken := c.next.Get(nu, nh); !ok || taken {
			bad = append(bad, errName(ou, oh))
			continue
		}
		a := old.Clone()
		a.User, a.Host = nu, nh
		c.drop(ou, oh)
		if err := c.save(a); err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return failed("RENAME USER", bad)
	}
	return nil
}

func (c *aclChange) alterUser(x *ast.AlterUserStmt) error {
	if x.CurrentAuth != nil {
		// ALTER USER USER() IDENTIFIED BY: one's own password, no privilege needed.
		old, ok := c.next.Get(c.s.acctUser, c.s.acctHost)
		if !ok {
			return failed("ALTER USER", []string{errName(c.s.acctUser, c.s.acctHost)})
		}
		a := old.Clone()
		if err := applyAuth(a, x.CurrentAuth); err != nil {
			return err
		}
		c.flushed = append(c.flushed, [2]string{a.User, a.Host})
		return c.save(a)
	}
	var bad []string
	for _, spec := range x.Specs {
		user, host := c.userOf(spec.User)
		self := user == c.s.acctUser && strings.EqualFold(host, c.s.acctHost)
		// Changing one's own password needs nothing; anything else needs CREATE USER.
		onlyPassword := len(x.AuthTokenOrTLSOptions) == 0 && len(x.ResourceOptions) == 0 && len(x.PasswordOrLockOptions) == 0 && x.CommentOrAttributeOption == nil
		if !(self && onlyPassword) {
			if err := c.s.requireGlobal(catalog.PrivCreateUser); err != nil {
				return err
			}
		}
		old, ok := c.next.Get(user, host)
		if !ok {
			if x.IfExists {
				c.s.addWarning("Note", sqlerr.ErrUserDoesNotExist, fmt.Sprintf("Authorization ID %s does not exist.", errName(user, host)))
				continue
			}
			bad = append(bad, errName(user, host))
			continue
		}
		a := old.Clone()
		if err := applyAuth(a, spec.AuthOpt); err != nil {
			return err
		}
		if err := applyOptions(a, x.AuthTokenOrTLSOptions, x.ResourceOptions, x.PasswordOrLockOptions, x.CommentOrAttributeOption); err != nil {
			return err
		}
		c.flushed = append(c.flushed, [2]string{a.User, a.Host})
		if err := c.save(a); err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return failed("ALTER USER", bad)
	}
	return nil
}

func (c *aclChange) setPassword(x *ast.SetPwdStmt) error {
	user, host := c.userOf(x.User)
	if x.User != nil && !(user == c.s.acctUser && strings.EqualFold(host, c.s.acctHost)) {
		if err := c.s.requireGlobal(catalog.PrivCreateUser); err != nil {
			return err
		}
	}
	old, ok := c.next.Get(user, host)
	if !ok {
		return sqlerr.New(sqlerr.ErrPasswordNoMatch, "Can't find any matching row in the user table")
	}
	a := old.Clone()
	h, err := hashPassword(a.Plugin, x.Password)
	if err != nil {
		return err
	}
	a.AuthString = h
	c.flushed = append(c.flushed, [2]string{a.User, a.Host})
	return c.save(a)
}

// grantTarget is a GRANT/REVOKE level resolved against the session.
type grantTarget struct {
	level     ast.GrantLevelType
	db, table string
}

func (s *Session) grantTarget(l *ast.GrantLevel) (grantTarget, error) {
	g := grantTarget{level: l.Level, db: l.DBName, table: l.TableName}
	if g.level != ast.GrantLevelGlobal && g.db == "" {
		if s.CurDB == "" {
			return g, sqlerr.New(sqlerr.ErrNoDB, "No database selected")
		}
		g.db = s.CurDB
	}
	return g, nil
}

func (g grantTarget) String() string {
	switch g.level {
	case ast.GrantLevelGlobal:
		return "*.*"
	case ast.GrantLevelDB:
		return "`" + g.db + "`.*"
	}
	return "`" + g.db + "`.`" + g.table + "`"
}

// grantPrivs turns a GRANT/REVOKE privilege list into static privileges and dynamic names for a
// level, refusing what the level cannot hold as MySQL does.
func grantPrivs(privs []*ast.PrivElem, g grantTarget, withGrant bool) (catalog.Priv, []string, error) {
	levelAll := catalog.PrivAllGlobal
	switch g.level {
	case ast.GrantLevelDB:
		levelAll = catalog.PrivAllDB
	case ast.GrantLevelTable:
		levelAll = catalog.PrivAllTable
	}
	var p catalog.Priv
	var dyn []string
	for _, e := range privs {
		if len(e.Cols) > 0 {
			return 0, nil, notSupported("column privileges")
		}
		switch e.Priv {
		case pmysql.AllPriv:
			p |= levelAll &^ catalog.PrivGrant
			if g.level == ast.GrantLevelGlobal {
				dyn = append(dyn, catalog.DynamicPrivs...)
			}
			continue
		case pmysql.UsagePriv:
			continue
		case pmysql.ExtendedPriv:
			name := strings.ToUpper(e.Name)
			if !catalog.IsDynamicPriv(name) {
				return 0, nil, sqlerr.New(sqlerr.ErrDynamicPrivNotRegistered, "Dynamic privilege '%s' is not registered with the server.", e.Name)
			}
			if g.level != ast.GrantLevelGlobal {
				return 0, nil, sqlerr.New(sqlerr.ErrIllegalPrivilegeLevel, "Illegal privilege level specified for %s", name)
			}
			dyn = append(dyn, name)
			continue
		}
		bit, ok := privOf[e.Priv]
		if !ok {
			return 0, nil, notSupported("privilege " + pmysql.Priv2Str[e.Priv])
		}
		p |= bit
	}
	if withGrant {
		p |= catalog.PrivGrant
	}
	if p&^levelAll != 0 {
		if g.level == ast.GrantLevelDB {
			return 0, nil, sqlerr.New(sqlerr.ErrWrongUsage, "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES")
		}
		return 0, nil, sqlerr.New(sqlerr.ErrIllegalGrantForTable, "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used")
	}
	sort.Strings(dyn)
	return p, slicesCompact(dyn), nil
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// checkGrantor refuses a GRANT or REVOKE the session's account may not give: it needs GRANT
// OPTION and the privileges themselves at the level (or above), with MySQL's error per level.
func (s *Session) checkGrantor(g grantTarget, p catalog.Priv, dyn []string) error {
	a := s.account()
	var have catalog.Priv
	switch g.level {
	case ast.GrantLevelGlobal:
		have = a.Global
	case ast.GrantLevelDB:
		have = a.DBPrivs(g.db)
	default:
		have = a.TablePrivs(g.db, g.table)
	}
	ok := have&catalog.PrivGrant != 0 && p&^have == 0
	for _, d := range dyn {
		if !a.HasDynamic(d) || !containsString(a.DynamicGrant, d) {
			ok = false
		}
	}
	if ok {
		return nil
	}
	switch g.level {
	case ast.GrantLevelGlobal:
		return sqlerr.New(sqlerr.ErrAccessDenied, "Access denied for user '%s'@'%s' (using password: %s)", s.acctUser, s.Host, yesNo(a.AuthString != ""))
	case ast.GrantLevelDB:
		return s.dbDenied(g.db)
	}
	return s.tableDenied("GRANT", g.table)
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func (c *aclChange) grant(x *ast.GrantStmt) error {
	if x.ObjectType == ast.ObjectTypeFunction || x.ObjectType == ast.ObjectTypeProcedure {
		return notSupported("routine privileges")
	}
	g, err := c.s.grantTarget(x.Level)
	if err != nil {
		return err
	}
	p, dyn, err := grantPrivs(x.Privs, g, x.WithGrant)
	if err != nil {
		return err
	}
	if err := c.s.checkGrantor(g, p, dyn); err != nil {
		return err
	}
	if len(x.AuthTokenOrTLSOptions) > 0 {
		return notSupported("GRANT ... REQUIRE (use ALTER USER)")
	}
	if g.level == ast.GrantLevelTable && p&catalog.PrivCreate == 0 {
		cat := c.s.catalog()
		if _, ok := cat.Table(g.db, g.table); !ok {
			if _, ok := cat.View(g.db, g.table); !ok {
				return sqlerr.New(sqlerr.ErrNoSuchTable, "Table '%s.%s' doesn't exist", g.db, g.table)
			}
		}
	}
	for _, spec := range x.Users {
		if spec.AuthOpt != nil {
			return sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'IDENTIFIED BY' at line 1")
		}
		user, host := c.userOf(spec.User)
		old, ok := c.next.Get(user, host)
		if !ok {
			return sqlerr.New(sqlerr.ErrCantCreateUserWithGrant, "You are not allowed to create a user with GRANT")
		}
		a := old.Clone()
		switch g.level {
		case ast.GrantLevelGlobal:
			a.Global |= p
			a.Dynamic = mergeStrings(a.Dynamic, dyn)
			if x.WithGrant {
				a.DynamicGrant = mergeStrings(a.DynamicGrant, dyn)
			}
		case ast.GrantLevelDB:
			if a.DBs == nil {
				a.DBs = map[string]catalog.Priv{}
			}
			k := findKey(a.DBs, g.db)
			a.DBs[k] |= p
		default:
			if a.Tables == nil {
				a.Tables = map[string]catalog.Priv{}
			}
			k := findKey(a.Tables, g.db+"\x00"+g.table)
			a.Tables[k] |= p
		}
		if err := c.save(a); err != nil {
			return err
		}
	}
	return nil
}

// findKey returns the key of m that equals k case-insensitively, or k.
func findKey(m map[string]catalog.Priv, k string) string {
	for mk := range m {
		if strings.EqualFold(mk, k) {
			return mk
		}
	}
	return k
}

func mergeStrings(a, b []string) []string {
	out := append(append([]string(nil), a...), b...)
	sort.Strings(out)
	return slicesCompact(out)
}

func removeStrings(a, b []string) []string {
	var out []string
	for _, v := range a {
		if !containsString(b, v) {
			out = append(out, v)
		}
	}
	return out
}

var revokeAllRe = regexp.MustCompile(`(?i)\bON\b`)

func (c *aclChange) revoke(x *ast.RevokeStmt) error {
	if x.ObjectType == ast.ObjectTypeFunction || x.ObjectType == ast.ObjectTypeProcedure {
		return notSupported("routine privileges")
	}
	// REVOKE ALL [PRIVILEGES], GRANT OPTION FROM u (no ON): every privilege at every level.
	if x.Level.Level == ast.GrantLevelGlobal && !revokeAllRe.MatchString(x.Text()) {
		if err := c.s.requireGlobal(catalog.PrivCreateUser); err != nil {
			return err
		}
		for _, spec := range x.Users {
			user, host := c.userOf(spec.User)
			old, ok := c.next.Get(user, host)
			if !ok {
				return sqlerr.New(sqlerr.ErrNonexistingGrant, "There is no such grant defined for user '%s' on host '%s'", user, host)
			}
			a := old.Clone()
			a.Global, a.Dynamic, a.DynamicGrant, a.DBs, a.Tables = 0, nil, nil, nil, nil
			if err := c.save(a); err != nil {
				return err
			}
		}
		return nil
	}
	g, err := c.s.grantTarget(x.Level)
	if err != nil {
		return err
	}
	p, dyn, err := grantPrivs(x.Privs, g, false)
	if err != nil {
		return err
	}
	if err := c.s.checkGrantor(g, p, dyn); err != nil {
		return err
	}
	for _, spec := range x.Users {
		user, host := c.userOf(spec.User)
		old, ok := c.next.Get(user, host)
		if !ok {
			return sqlerr.New(sqlerr.ErrNonexistingGrant, "There is no such grant defined for user '%s' on host '%s'", user, host)
		}
		a := old.Clone()
		switch g.level {
		case ast.GrantLevelGlobal:
			a.Global &^= p
			a.Dynamic = removeStrings(a.Dynamic, dyn)
			a.DynamicGrant = removeStrings(a.DynamicGrant, dyn)
			if p&catalog.PrivGrant != 0 {
				a.DynamicGrant = nil
			}
		case ast.GrantLevelDB:
			k := findKey(a.DBs, g.db)
			if _, ok := a.DBs[k]; !ok {
				return sqlerr.New(sqlerr.ErrNonexistingGrant, "There is no such grant defined for user '%s' on host '%s'", user, host)
			}
			if a.DBs[k] &^= p; a.DBs[k] == 0 {
				delete(a.DBs, k)
			}
		default:
			k := findKey(a.Tables, g.db+"\x00"+g.table)
			if _, ok := a.Tables[k]; !ok {
				return sqlerr.New(sqlerr.ErrNonexistingTableGrant, "There is no such grant defined for user '%s' on host '%s' on table '%s'", user, host, g.table)
			}
			if a.Tables[k] &^= p; a.Tables[k] == 0 {
				delete(a.Tables, k)
			}
		}
		if err := c.save(a); err != nil {
			return err
		}
	}
	return nil
}

// showGrants is SHOW GRANTS [FOR user] in MySQL 8's format.
func (s *Session) showGrants(x *ast.ShowStmt) (*exec.Select, error) {
	user, host := s.acctUser, s.acctHost
	if x.User != nil && !x.User.CurrentUser {
		user, host = x.User.Username, x.User.Hostname
		if !(user == s.acctUser && strings.EqualFold(host, s.acctHost)) && !s.account().AnyInDB("mysql") {
			return nil, s.dbDenied("mysql")
		}
	}
	if x.Roles != nil {
		return nil, notSupported("SHOW GRANTS ... USING (roles)")
	}
	a, ok := s.catalog().Accounts.Get(user, host)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrNonexistingGrant, "There is no such grant defined for user '%s' on host '%s'", user, host)
	}
	lines := grantLines(a)
	return staticPlan([]vcol{stringCol("Grants for " + a.User + "@" + a.Host)}, func(*expr.Env) ([][]types.Value, error) {
		rows := make([][]types.Value, len(lines))
		for i, l := range lines {
			rows[i] = []types.Value{stringVal(l)}
		}
		return rows, nil
	}), nil
}

// grantLines renders an account's grants as MySQL 8's SHOW GRANTS does: the global line (static
// privileges listed, or USAGE), the dynamic privileges (comma-separated without spaces), then
// database and table grants (ALL PRIVILEGES when the level's set is complete).
func grantLines(a *catalog.Account) []string {
	to := " TO " + a.Name()
	wg := func(p catalog.Priv) string {
		if p&catalog.PrivGrant != 0 {
			return " WITH GRANT OPTION"
		}
		return ""
	}
	list := func(p, all catalog.Priv) string {
		if all != catalog.PrivAllGlobal && p&^catalog.PrivGrant == all&^catalog.PrivGrant {
			return "ALL PRIVILEGES"
		}
		if n := p.Names(); len(n) > 0 {
			return strings.Join(n, ", ")
		}
		return "USAGE"
	}
	lines := []string{"GRANT " + list(a.Global, catalog.PrivAllGlobal) + " ON *.*" + to + wg(a.Global)}
	if plain := removeStrings(a.Dynamic, a.DynamicGrant); len(plain) > 0 {
		lines = append(lines, "GRANT "+strings.Join(plain, ",")+" ON *.*"+to)
	}
	if withGrant := a.DynamicGrant; len(withGrant) > 0 {
		lines = append(lines, "GRANT "+strings.Join(withGrant, ",")+" ON *.*"+to+" WITH GRANT OPTION")
	}
	dbs := make([]string, 0, len(a.DBs))
	for d := range a.DBs {
		dbs = append(dbs, d)
	}
	sort.Strings(dbs)
	for _, d := range dbs {
		lines = append(lines, "GRANT "+list(a.DBs[d], catalog.PrivAllDB)+" ON `"+strings.ReplaceAll(d, "`", "``")+"`.*"+to+wg(a.DBs[d]))
	}
	tabs := make([]string, 0, len(a.Tables))
	for k := range a.Tables {
		tabs = append(tabs, k)
	}
	sort.Strings(tabs)
	for _, k := range tabs {
		d, t, _ := strings.Cut(k, "\x00")
		lines = append(lines, "GRANT "+list(a.Tables[k], catalog.PrivAllTable)+" ON `"+strings.ReplaceAll(d, "`", "``")+"`.`"+strings.ReplaceAll(t, "`", "``")+"`"+to+wg(a.Tables[k]))
	}
	return lines
}

// showCreateUser is SHOW CREATE USER in MySQL 8's format (the stored hash as it is).
func (s *Session) showCreateUser(x *ast.ShowStmt) (*exec.Select, error) {
	user, host := s.acctUser, s.acctHost
	if x.User != nil && !x.User.CurrentUser {
		user, host = x.User.Username, x.User.Hostname
		if !(user == s.acctUser && strings.EqualFold(host, s.acctHost)) && !s.account().AnyInDB("mysql") {
			return nil, s.dbDenied("mysql")
		}
	}
	a, ok := s.catalog().Accounts.Get(user, host)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrCannotUser, "Operation SHOW CREATE USER failed for %s", errName(user, host))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE USER %s IDENTIFIED WITH '%s'", a.Name(), a.Plugin)
	if a.AuthString != "" {
		fmt.Fprintf(&b, " AS '%s'", strings.ReplaceAll(a.AuthString, "'", "''"))
	}
	req := "NONE"
	if a.SSLType != "" {
		req = "SSL"
	}
	lock := "UNLOCK"
	if a.Locked {
		lock = "LOCK"
	}
	fmt.Fprintf(&b, " REQUIRE %s PASSWORD EXPIRE DEFAULT ACCOUNT %s PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT", req, lock)
	line := b.String()
	return staticPlan([]vcol{stringCol("CREATE USER for " + a.User + "@" + a.Host)}, func(*expr.Env) ([][]types.Value, error) {
		return [][]types.Value{{stringVal(line)}}, nil
	}), nil
}
