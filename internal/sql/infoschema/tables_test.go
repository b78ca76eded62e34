package infoschema

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// fakeSession answers infoschema.Session from fixed values, as the facade's *sql.Session would.
type fakeSession struct {
	cat      *catalog.Catalog
	procs    []Process
	process  bool
	user     string
	views    map[string]*catalog.Table // view name -> its columns; absent: an invalid view
	acct     *catalog.Account          // the session's account; nil: root (every listing unfiltered)
	members  []ClusterMember
	curDB    string
	warnings []sqlerr.Warning
}

func (f *fakeSession) Catalog() *catalog.Catalog { return f.cat }
func (f *fakeSession) AutoIncrementValue(_ *expr.Env, t *catalog.Table) (types.Value, error) {
	if t.AutoIncCol < 0 {
		return types.Null, nil
	}
	return types.NewUint(42), nil
}
func (f *fakeSession) ViewAsTable(v *catalog.View) (*catalog.Table, error) {
	if t, ok := f.views[v.Name]; ok {
		return t, nil
	}
	return nil, errors.New("invalid view")
}
func (f *fakeSession) Processes() []Process     { return f.procs }
func (f *fakeSession) CanSeeAllProcesses() bool { return f.process }
func (f *fakeSession) SessionUser() string      { return f.user }

func (f *fakeSession) Account() (string, string) {
	if f.acct == nil {
		return "root", "localhost"
	}
	return f.acct.User, f.acct.Host
}
func (f *fakeSession) AccountGrants() *catalog.Account {
	if f.acct == nil {
		a := &catalog.Account{User: "root", Host: "localhost", Global: catalog.PrivAllGlobal}
		a.Init()
		return a
	}
	return f.acct
}
func (f *fakeSession) AllPrivileged() bool { return f.acct == nil }
func (f *fakeSession) VisibleDB(db string) bool {
	return f.acct == nil || strings.EqualFold(db, "information_schema") || f.acct.AnyInDB(db)
}
func (f *fakeSession) VisibleTable(db, table string) bool {
	return f.acct == nil || f.acct.TablePrivs(db, table)&^catalog.PrivGrant != 0
}
func (f *fakeSession) ClusterMembers() []ClusterMember { return f.members }
func (f *fakeSession) ServerVersion() string           { return "8.0.36-kiln" }
func (f *fakeSession) CurrentDB() string               { return f.curDB }
func (f *fakeSession) SysVar(v *sysvar.Var, _ bool) types.Value {
	return types.NewString("value of " + v.Name)
}
func (f *fakeSession) StatusVariables(bool) map[string]string {
	return map[string]string{"Uptime": "7", "Threads_connected": "1"}
}
func (f *fakeSession) Warnings() []sqlerr.Warning { return f.warnings }
func (f *fakeSession) AutoIncrementNext(_ *expr.Env, t *catalog.Table) (uint64, error) {
	if t.AutoIncCol < 0 {
		return 0, nil
	}
	return 42, nil
}

func newFake() *fakeSession {
	cat := catalog.New()
	cat.PutDB(&catalog.Database{Name: "d", Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"})
	vc := types.ColType{Tp: mysql.TypeVarchar, Len: 10, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	t := &catalog.Table{ID: 100, DB: "d", Name: "t", Engine: "InnoDB", Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci", Columns: []*catalog.Column{
		{ID: 1, Name: "id", Type: types.ColType{Tp: mysql.TypeLonglong}, NotNull: true, AutoInc: true},
		{ID: 2, Name: "s", Type: vc},
	}, Indexes: []*catalog.Index{{Name: "PRIMARY", Primary: true, Unique: true, Columns: []catalog.IndexColumn{{Col: 1}}}}}
	t.Init()
	cat.PutTable(t)
	cat.PutView(&catalog.View{DB: "d", Name: "v", Select: "select s from t"})
	cat.PutView(&catalog.View{DB: "d", Name: "broken", Select: "select gone from t"})
	vt := &catalog.Table{DB: "d", Name: "v", Columns: []*catalog.Column{{ID: 1, Name: "s", Type: vc, NotNull: true}}}
	vt.Init()
	return &fakeSession{cat: cat, user: "bob", views: map[string]*catalog.Table{"v": vt}}
}

func rowsOf(t *testing.T, s Session, name string) (Table, [][]types.Value) {
	t.Helper()
	tb, ok := InformationSchema(s, name)
	if !ok {
		t.Fatalf("information_schema.%s not found", name)
	}
	rows, err := tb.Rows(nil)
	if err != nil {
		t.Fatalf("%s rows: %v", name, err)
	}
	for _, r := range rows {
		if len(r) != len(tb.Cols) {
			t.Fatalf("%s: row of %d values, %d columns", name, len(r), len(tb.Cols))
		}
	}
	return tb, rows
}

func str(v types.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	return v.String()
}

// TestProcessRows: without PROCESS a user sees only their own threads; empty DB and Info are NULL.
func TestProcessRows(t *testing.T) {
	f := newFake()
	f.procs = []Process{{ID: 1, User: "bob", Command: "Query", Info: "select 1", DB: "d"}, {ID: 2, User: "root", Command: "Sleep"}}
	for _, tc := range []struct {
		process bool
		ids     []string
	}{{false, []string{"1"}}, {true, []string{"1", "2"}}} {
		f.process = tc.process
		rows := ProcessRows(f)
		if len(rows) != len(tc.ids) {
			t.Fatalf("PROCESS=%v: %d rows, want %v", tc.process, len(rows), tc.ids)
		}
		for i, r := range rows {
			if str(r[0]) != tc.ids[i] {
				t.Errorf("PROCESS=%v: row %d id %s, want %s", tc.process, i, str(r[0]), tc.ids[i])
			}
		}
	}
	rows := ProcessRows(f)
	if str(rows[1][3]) != "NULL" || str(rows[1][7]) != "NULL" || str(rows[0][3]) != "d" {
		t.Errorf("DB/INFO = %s/%s, %s: want NULL/NULL, d", str(rows[1][3]), str(rows[1][7]), str(rows[0][3]))
	}
	_, prows := rowsOf(t, f, "processlist")
	if len(prows) != 2 {
		t.Errorf("information_schema.PROCESSLIST: %d rows, want 2", len(prows))
	}
}

// TestInformationSchemaTables: the tables read the session through the interface (AUTO_INCREMENT,
// a view's planned columns; an invalid view lists none), names are case-insensitive, and the
// tables of objects Kiln lacks have MySQL's columns and no rows.
func TestInformationSchemaTables(t *testing.T) {
	f := newFake()
	tb, rows := rowsOf(t, f, "TABLES")
	if len(tb.Cols) != 21 || tb.Cols[13].Name != "AUTO_INCREMENT" {
		t.Fatalf("TABLES columns: %v", tb.Cols)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[str(r[2])] = str(r[3]) + " " + str(r[13])
	}
	if got["t"] != "BASE TABLE 42" || got["v"] != "VIEW NULL" {
		t.Errorf("TABLES rows: %v", got)
	}

	_, rows = rowsOf(t, f, "columns")
	var cols []string
	for _, r := range rows {
		cols = append(cols, str(r[2])+"."+str(r[3])+" "+str(r[6])+" "+str(r[16])+" "+str(r[17]))
	}
	want := []string{"t.id NO PRI auto_increment", "t.s YES  ", "v.s NO  "}
	if len(cols) != len(want) {
		t.Fatalf("COLUMNS rows %q, want %q", cols, want)
	}
	for i := range want {
		if cols[i] != want[i] {
			t.Errorf("COLUMNS row %d = %q, want %q", i, cols[i], want[i])
		}
	}

	_, rows = rowsOf(t, f, "Schemata")
	if len(rows) != 5 || str(rows[4][1]) != "d" {
		t.Errorf("SCHEMATA rows: %v", rows)
	}
	tb, rows = rowsOf(t, f, "TRIGGERS")
	if len(rows) != 0 || tb.Cols[0].Name != "TRIGGER_CATALOG" {
		t.Errorf("TRIGGERS: %d rows, first column %s", len(rows), tb.Cols[0].Name)
	}
	_, rows = rowsOf(t, f, "TABLE_CONSTRAINTS")
	if len(rows) != 1 || str(rows[0][5]) != "PRIMARY KEY" {
		t.Errorf("TABLE_CONSTRAINTS rows: %v", rows)
	}
	if _, ok := InformationSchema(f, "NO_SUCH_TABLE"); ok {
		t.Error("an unknown table was found")
	}
}

// TestEmptyShow: SHOW TRIGGERS has MySQL's columns and no rows; other SHOWs are not its.
func TestEmptyShow(t *testing.T) {
	tb, ok := EmptyShow(ast.ShowTriggers)
	if !ok || len(tb.Cols) != 11 || tb.Cols[0].Name != "Trigger" {
		t.Fatalf("SHOW TRIGGERS: %v %v", ok, tb.Cols)
	}
	if rows, err := tb.Rows(nil); err != nil || len(rows) != 0 {
		t.Errorf("SHOW TRIGGERS rows: %v %v", rows, err)
	}
	if _, ok := EmptyShow(ast.ShowTables); ok {
		t.Error("SHOW TABLES is not an empty SHOW")
	}
}

// TestVirtualTableFiltering: a user without privileges on a schema does not see its rows in
// information_schema listings, sees only their own account in the privilege tables, and root sees
// everything; mysql's grant tables list every account.
func TestVirtualTableFiltering(t *testing.T) {
	f := newFake()
	f.cat.PutTable(func() *catalog.Table {
		t := &catalog.Table{ID: 101, DB: "d", Name: "secret", Columns: []*catalog.Column{{ID: 1, Name: "x", Type: types.ColType{Tp: mysql.TypeLong}}}}
		t.Init()
		return t
	}())
	bob := &catalog.Account{User: "bob", Host: "%", Tables: map[string]catalog.Priv{"d\x00t": catalog.PrivSelect}}
	f.cat.Accounts.Put(bob)
	f.cat.Accounts.Put(&catalog.Account{User: "root", Host: "localhost", Global: catalog.PrivAllGlobal})
	names := func(db, name string, col int) []string {
		tb, ok := VirtualTable(f, db, name)
		if !ok {
			t.Fatalf("%s.%s not found", db, name)
		}
		rows, err := tb.Rows(nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, str(r[col]))
		}
		return out
	}
	for _, tc := range []struct {
		who       *catalog.Account
		db, table string
		col       int
		want      string
	}{
		{nil, "information_schema", "TABLES", 2, "secret t broken v"},
		{bob, "information_schema", "TABLES", 2, "t"},
		{bob, "information_schema", "SCHEMATA", 1, "information_schema d"},
		{bob, "information_schema", "TABLE_PRIVILEGES", 0, "'bob'@'%'"},
		{nil, "information_schema", "TABLE_PRIVILEGES", 0, "'bob'@'%'"},
		{nil, "information_schema", "USER_PRIVILEGES", 0, "'bob'@'%' 'root'@'localhost'"},
		{bob, "mysql", "tables_priv", 3, "t"},
		{bob, "mysql", "user", 1, "bob root"},
	} {
		f.acct = tc.who
		got := names(tc.db, tc.table, tc.col)
		// USER_PRIVILEGES has a row per privilege: compare the distinct grantees.
		got = slices.Compact(got)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("as %v, %s.%s: %q, want %q", tc.who != nil, tc.db, tc.table, strings.Join(got, " "), tc.want)
		}
	}
	if _, ok := VirtualTable(f, "d", "t"); ok {
		t.Error("a base table was taken for a virtual one")
	}
}

// TestClusterTables: both shapes of the member list, from the session's ClusterMembers.
func TestClusterTables(t *testing.T) {
	f := newFake()
	f.members = []ClusterMember{{ID: 3, RaftAddr: "10.0.0.3:7000", MySQLAddr: "10.0.0.3:3306", Role: "PRIMARY", State: "ONLINE", Voter: true, Self: true}}
	tb, ok := VirtualTable(f, "INFORMATION_SCHEMA", "kiln_cluster_members")
	if !ok {
		t.Fatal("KILN_CLUSTER_MEMBERS not found")
	}
	rows, _ := tb.Rows(nil)
	if len(rows) != 1 || str(rows[0][0]) != "3" || str(rows[0][5]) != "YES" || str(rows[0][7]) != "YES" {
		t.Errorf("KILN_CLUSTER_MEMBERS: %v", rows)
	}
	tb, ok = VirtualTable(f, "performance_schema", "replication_group_members")
	if !ok {
		t.Fatal("replication_group_members not found")
	}
	rows, _ = tb.Rows(nil)
	if len(rows) != 1 || str(rows[0][2]) != "10.0.0.3" || str(rows[0][3]) != "3306" || str(rows[0][6]) != "8.0.36-kiln" {
		t.Errorf("replication_group_members: %v", rows)
	}
	if SystemLogTable("mysql", "GENERAL_LOG") == "" || SystemLogTable("d", "general_log") != "" {
		t.Error("SystemLogTable: mysql.general_log only")
	}
}
