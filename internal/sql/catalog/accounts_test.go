package catalog

import (
	"testing"
)

func TestDynamicPrivsSorted(t *testing.T) {
	for i := 1; i < len(DynamicPrivs); i++ {
		if DynamicPrivs[i-1] >= DynamicPrivs[i] {
			t.Fatalf("DynamicPrivs not sorted at %s", DynamicPrivs[i])
		}
	}
	if len(privNames) != len(PrivColumns) || Priv(1)<<len(privNames) != privEnd {
		t.Fatal("privilege tables out of step")
	}
}

// TestAccountsMatchOrder: a login matches the most specific host first, a named user before the
// anonymous one, and 'localhost' only from a loopback address.
func TestAccountsMatchOrder(t *testing.T) {
	l := NewAccounts()
	for _, a := range []*Account{{User: "u", Host: "%"}, {User: "u", Host: "10.0.%"}, {User: "", Host: "10.0.0.1"},
		{User: "u", Host: "10.0.0.1"}, {User: "u", Host: "LocalHost"}} {
		l.Put(a)
	}
	for _, c := range []struct{ user, from, wantUser, wantHost string }{
		{"u", "10.0.0.1", "u", "10.0.0.1"},
		{"v", "10.0.0.1", "", "10.0.0.1"},
		{"u", "10.0.9.9", "u", "10.0.%"},
		{"u", "192.168.1.1", "u", "%"},
		{"u", "127.0.0.1", "u", "LocalHost"},
		{"u", "::1", "u", "LocalHost"},
	} {
		a, ok := l.Match(c.user, c.from)
		if !ok || a.User != c.wantUser || a.Host != c.wantHost {
			t.Errorf("Match(%q, %q) = %+v %v, want %q@%q", c.user, c.from, a, ok, c.wantUser, c.wantHost)
		}
	}
	if _, ok := l.Match("v", "192.168.1.1"); ok {
		t.Error("v from 192.168.1.1 matched an account")
	}
	if _, ok := l.Get("u", "localhost"); !ok {
		t.Error("Get does not compare hosts case-insensitively")
	}
}

// TestAccountsSaveLoad: a store without the accounts marker holds the implied root; WriteInit
// writes it out with the marker; saved accounts and their grants load back, with the derived
// lookups built.
func TestAccountsSaveLoad(t *testing.T) {
	st := memStore{}
	cat, err := Load(st.get, st.scan)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Accounts.Initialised() || len(cat.Accounts.All()) != 1 {
		t.Fatalf("empty store: initialised %v, %d accounts; want the implied root only", cat.Accounts.Initialised(), len(cat.Accounts.All()))
	}
	if a, ok := cat.Accounts.Match("root", "127.0.0.1"); !ok || a.Global != PrivAllGlobal || !a.HasDynamic("SYSTEM_VARIABLES_ADMIN") {
		t.Fatalf("implied root %+v %v", a, ok)
	}
	next := cat.Accounts.Copy()
	if err := next.WriteInit(st); err != nil {
		t.Fatal(err)
	}
	if cat.Accounts.Initialised() || !next.Initialised() {
		t.Error("WriteInit changed the original set or did not mark the copy")
	}
	u := &Account{User: "u", Host: "%", Plugin: "mysql_native_password", Global: PrivGrant, // GRANT OPTION alone gives no access (AnyInDB)
		DBs: map[string]Priv{"D1": PrivSelect | PrivInsert}, Tables: map[string]Priv{"d2\x00T": PrivUpdate}}
	next.Put(u)
	if err := SaveAccount(st, u); err != nil {
		t.Fatal(err)
	}
	gone := &Account{User: "gone", Host: "%"}
	if err := SaveAccount(st, gone); err != nil {
		t.Fatal(err)
	}
	DeleteAccount(st, "gone", "%")
	if _, ok := cat.Accounts.Get("u", "%"); ok {
		t.Error("Put on a copy is visible in the original")
	}

	got, err := Load(st.get, st.scan)
	if err != nil {
		t.Fatal(err)
	}
	l := got.Accounts
	if !l.Initialised() || len(l.All()) != 2 {
		t.Fatalf("reloaded: initialised %v, %d accounts; want root and u", l.Initialised(), len(l.All()))
	}
	a, ok := l.Get("u", "%")
	if !ok {
		t.Fatal("u@% not loaded")
	}
	for _, c := range []struct {
		name string
		got  Priv
		want Priv
	}{
		{"DBPrivs(d1)", a.DBPrivs("d1"), PrivGrant | PrivSelect | PrivInsert},
		{"TablePrivs(D2, t)", a.TablePrivs("D2", "t"), PrivGrant | PrivUpdate},
		{"TablePrivs(d2, other)", a.TablePrivs("d2", "other"), PrivGrant},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got.Names(), c.want.Names())
		}
	}
	if !a.AnyInDB("d2") || a.AnyInDB("d3") {
		t.Error("AnyInDB wrong: want d2 (a table grant) and not d3")
	}
	if c := a.Clone(); c == a || c.TablePrivs("d2", "t") != a.TablePrivs("d2", "t") {
		t.Error("Clone shares the account or lost its derived lookups")
	}
}

func TestPrivNames(t *testing.T) {
	p := PrivSelect | PrivGrant | PrivShowDB
	if got := p.Names(); len(got) != 2 || got[0] != "SELECT" || got[1] != "SHOW DATABASES" {
		t.Errorf("Names = %q, want SELECT, SHOW DATABASES (GRANT OPTION is a clause)", got)
	}
	if got := (PrivGrant | PrivFile).First(); got != "FILE" {
		t.Errorf("First = %q, want FILE", got)
	}
	if QuoteAccount("a`b", "%") != "`a``b`@`%`" {
		t.Error("QuoteAccount does not double backquotes")
	}
}

// storedAccount is an account record as Kiln has written it since accounts existed (the JSON
// field names and the privilege bits are the on-disk format).
const storedAccount = `{"user":"u","host":"%","plugin":"caching_sha2_password","auth_string":"$A$005$x","ssl_type":"ANY","locked":true,"global":1025,"dynamic":["BACKUP_ADMIN"],"dynamic_grant":["BACKUP_ADMIN"],"dbs":{"D":3},"tables":{"d\u0000t":4}}`

// TestAccountStoredForm pins the stored form byte for byte, and that it loads back with the
// derived lookups built.
func TestAccountStoredForm(t *testing.T) {
	st := memStore{}
	a := &Account{User: "u", Host: "%", Plugin: "caching_sha2_password", AuthString: "$A$005$x", SSLType: "ANY", Locked: true,
		Global: PrivSelect | PrivGrant, Dynamic: []string{"BACKUP_ADMIN"}, DynamicGrant: []string{"BACKUP_ADMIN"},
		DBs: map[string]Priv{"D": PrivSelect | PrivInsert}, Tables: map[string]Priv{"d\x00t": PrivUpdate}}
	a.Init()
	if err := SaveAccount(st, a); err != nil {
		t.Fatal(err)
	}
	var got string
	for _, v := range st {
		got = string(v)
	}
	if len(st) != 1 || got != storedAccount {
		t.Fatalf("stored form changed:\n got %s\nwant %s", got, storedAccount)
	}
	l, err := LoadAccounts(st.get, st.scan)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := l.Get("u", "%")
	if !ok || b.TablePrivs("D", "T") != PrivSelect|PrivGrant|PrivInsert|PrivUpdate {
		t.Fatalf("loaded %+v %v: privileges on d.t not derived", b, ok)
	}
}
