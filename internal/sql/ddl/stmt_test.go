package ddl

import (
	"reflect"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// TestDatabases: the databases whose metadata locks a DDL statement needs, lower-case and sorted
// (the order every DDL takes them in, so two DDLs never deadlock), the current one for unqualified
// names.
func TestDatabases(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		cur  string
		want []string
	}{
		{"CREATE DATABASE Foo", "x", []string{"foo"}},
		{"DROP DATABASE IF EXISTS foo", "", []string{"foo"}},
		{"CREATE TABLE t (a INT)", "Cur", []string{"cur"}},
		{"CREATE TABLE t (a INT)", "", []string{}},
		{"CREATE TABLE b.t LIKE a.s", "x", []string{"a", "b"}},
		{"DROP TABLE z.t, a.t, t", "m", []string{"a", "m", "z"}},
		{"RENAME TABLE a.t TO b.t, t TO c.t", "d", []string{"a", "b", "c", "d"}},
		{"ALTER TABLE t RENAME TO other.t", "d", []string{"d", "other"}},
		{"CREATE INDEX i ON s.t (a)", "d", []string{"s"}},
		{"DROP INDEX i ON t", "d", []string{"d"}},
		{"TRUNCATE TABLE s.t", "d", []string{"s"}},
		{"CREATE VIEW v AS SELECT 1", "d", []string{"d"}},
	} {
		stmts, _, err := parser.New().ParseSQL(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := Databases(stmts[0], tc.cur); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s (current %q): got %v, want %v", tc.sql, tc.cur, got, tc.want)
		}
	}
}

// TestColTypeErrors: column types MySQL refuses, with its error codes.
func TestColTypeErrors(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		code uint16
	}{
		{"CREATE TABLE t (a VARCHAR(70000))", sqlerr.ErrTooBigFieldLength},
		{"CREATE TABLE t (a DECIMAL(66,2))", sqlerr.ErrTooBigPrecision},
		{"CREATE TABLE t (a DECIMAL(40,31))", sqlerr.ErrTooBigScale},
		{"CREATE TABLE t (a DECIMAL(5,6))", sqlerr.ErrMBiggerThanD},
		{"CREATE TABLE t (a DATETIME(7))", sqlerr.ErrTooBigPrecision},
		{"CREATE TABLE t (a ENUM('x','X '))", sqlerr.ErrDuplicatedValueInType},
		{"CREATE TABLE t (a SET('x,y'))", sqlerr.ErrIllegalValueForType},
		{"CREATE TABLE t (a BIT(65))", sqlerr.ErrTooBigDisplayWidth},
	} {
		stmts, _, err := parser.New().ParseSQL(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		cd := stmts[0].(*ast.CreateTableStmt).Cols[0]
		_, err = colType(cd.Name.Name.O, cd.Tp, "utf8mb4", "utf8mb4_0900_ai_ci")
		if !sqlerr.Is(err, tc.code) {
			t.Errorf("%s: got %v, want error %d", tc.sql, err, tc.code)
		}
	}
}
