package infoschema

import (
	"errors"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the parser

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// TestShow runs SHOW statements against the fake session: each row is rendered as its values
// joined by "|", rows by ";"; an error case names the MySQL error code.
func TestShow(t *testing.T) {
	bob := &catalog.Account{User: "bob", Host: "%", Tables: map[string]catalog.Priv{"d\x00t": catalog.PrivSelect}}
	bob.Init()
	for _, tc := range []struct {
		name  string
		sql   string
		curDB string
		who   *catalog.Account
		want  string // rows, or "" with code
		code  uint16
	}{
		{name: "tables of the current db", sql: "show tables", curDB: "d", want: "broken;t;v"},
		{name: "full tables", sql: "show full tables from d like 't%'", want: "t|BASE TABLE"},
		{name: "tables filtered by privilege", sql: "show tables from d", who: bob, want: "t"},
		{name: "no database selected", sql: "show tables", code: sqlerr.ErrNoDB},
		{name: "unknown database", sql: "show tables from nope", code: sqlerr.ErrBadDB},
		{name: "databases filtered", sql: "show databases", who: bob, want: "d;information_schema"},
		{name: "databases like", sql: "show databases like 'inf%'", want: "information_schema"},
		{name: "columns", sql: "show columns from d.t", want: "id|bigint|NO|PRI|NULL|auto_increment;s|varchar(10)|YES||NULL|"},
		{name: "columns of a view", sql: "show columns from v", curDB: "d", want: "s|varchar(10)|NO||NULL|"},
		{name: "columns of a missing table", sql: "show columns from d.nope", code: sqlerr.ErrNoSuchTable},
		{name: "create table with its counter", sql: "show create table d.t", want: "t|CREATE TABLE `t` (\n  `id` bigint NOT NULL AUTO_INCREMENT,\n  `s` varchar(10) DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=42 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"},
		{name: "create view of a table", sql: "show create view d.t", code: sqlerr.ErrWrongObject},
		{name: "create view", sql: "show create view d.v", want: "v|CREATE ALGORITHM= DEFINER= SQL SECURITY  VIEW `v` AS select s from t WITH  CHECK OPTION||"},
		{name: "log table definition", sql: "show create table mysql.general_log", want: "general_log|" + SystemLogTable("mysql", "general_log")},
		{name: "create database", sql: "show create database if not exists d", want: "d|CREATE DATABASE /*!32312 IF NOT EXISTS*/ `d` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */ /*!80016 DEFAULT ENCRYPTION='N' */"},
		{name: "variables like", sql: "show variables like 'autocommit'", want: "autocommit|value of autocommit"},
		{name: "status sorted", sql: "show status", want: "Threads_connected|1;Uptime|7"},
		{name: "warnings", sql: "show warnings", want: "Warning|1366|bad;Error|1146|gone"},
		{name: "errors only", sql: "show errors", want: "Error|1146|gone"},
		{name: "triggers need a db", sql: "show triggers", code: sqlerr.ErrNoDB},
		{name: "triggers empty", sql: "show triggers from d", want: ""},
		{name: "plugins empty", sql: "show plugins", want: ""},
		{name: "unsupported", sql: "show profiles", code: sqlerr.ErrNotSupportedYet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.curDB, f.acct = tc.curDB, tc.who
			f.warnings = []sqlerr.Warning{{Level: "Warning", Code: 1366, Message: "bad"}, {Level: "Error", Code: 1146, Message: "gone"}}
			st, err := parser.New().ParseOneStmt(tc.sql, "", "")
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			tb, err := Show(f, nil, st.(*ast.ShowStmt))
			if tc.code != 0 {
				var se *sqlerr.Error
				if !errors.As(err, &se) || se.Code != tc.code {
					t.Fatalf("error %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tb.Rows(nil)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range rows {
				if len(r) != len(tb.Cols) {
					t.Fatalf("row of %d values, %d columns", len(r), len(tb.Cols))
				}
				var vs []string
				for _, v := range r {
					vs = append(vs, str(v))
				}
				out = append(out, strings.Join(vs, "|"))
			}
			if got := strings.Join(out, ";"); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
