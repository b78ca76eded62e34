package sql

import (
	"context"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// TestBinaryStringAssignment: a binary string (a BLOB-typed COM_STMT_EXECUTE parameter, which
// internal/mysql turns into a KindBytes value, or X'..', 0x.., _binary '..', UNHEX, CAST AS BINARY,
// a VARBINARY column) assigned to a latin1 column keeps its bytes: each byte is one latin1
// character. Assigned to a utf8mb4 column it is validated: 1366 in strict mode, a warning and the
// value cut before the first malformed byte otherwise. A string-typed parameter is text in
// character_set_client, so invalid UTF-8 in it is 1366 even for a latin1 column. Every expectation
// was checked against MariaDB 10.11 (same stored bytes and codes; MariaDB names the column
// `db`.`t`.`v` and, outside strict mode, stores '?' for malformed bytes where MySQL 8 cuts the
// value, see Field_longstr::check_string_copy_error and well_formed_copy_nchars).
func TestBinaryStringAssignment(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	mustQ(t, s, "CREATE DATABASE b")
	mustQ(t, s, "USE b")
	mustQ(t, s, "CREATE TABLE l (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(20), m MEDIUMTEXT) CHARSET=latin1")
	mustQ(t, s, "CREATE TABLE u (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(20), m MEDIUMTEXT) CHARSET=utf8mb4")
	mustQ(t, s, "CREATE TABLE bin (id INT PRIMARY KEY, b VARBINARY(20))")
	mustQ(t, s, "INSERT INTO bin VALUES (1, X'8081FF'), (2, X'C3A9')")

	const bad = "\x80\x81\xff"
	const bad1366 = `Incorrect string value: '\x80\x81\xFF' for column 'v' at row 1`
	ctx := context.Background()
	cases := []struct {
		name   string
		table  string
		strict bool
		names  string       // SET NAMES before the statement (default utf8mb4)
		sql    string       // an INSERT INTO <table> (v) ...; "?" is bound to arg
		arg    *types.Value // the bound parameter, if any
		err    string       // the expected 1366 message, or ""
		hex    string       // HEX(CONVERT(v USING utf8mb4)) of the stored row
		warns  int          // warnings of the INSERT
	}{
		// latin1: the bytes are stored, in and out of strict mode.
		{name: "blob param latin1", table: "l", strict: true, sql: "VALUES (?)", arg: ptr(types.NewBytes(bad)), hex: "E282ACC281C3BF"},
		{name: "blob param latin1 utf8 bytes", table: "l", strict: true, sql: "VALUES (?)", arg: ptr(types.NewBytes("\xc3\xa9")), hex: "C383C2A9"},
		{name: "blob param latin1 nonstrict", table: "l", sql: "VALUES (?)", arg: ptr(types.NewBytes("ab\xe9")), hex: "6162C3A9"},
		{name: "hex literal latin1", table: "l", strict: true, sql: "VALUES (X'8081FF')", hex: "E282ACC281C3BF"},
		{name: "0x literal latin1", table: "l", strict: true, sql: "VALUES (0x8081ff)", hex: "E282ACC281C3BF"},
		{name: "_binary latin1", table: "l", strict: true, sql: "VALUES (_binary X'8081FF')", hex: "E282ACC281C3BF"},
		{name: "unhex latin1", table: "l", strict: true, sql: "VALUES (UNHEX('8081FF'))", hex: "E282ACC281C3BF"},
		{name: "cast binary latin1", table: "l", strict: true, sql: "VALUES (CAST(X'8081FF' AS BINARY))", hex: "E282ACC281C3BF"},
		{name: "varbinary column latin1", table: "l", strict: true, sql: "SELECT b FROM bin WHERE id = 1", hex: "E282ACC281C3BF"},
		// A string-typed parameter is text in character_set_client.
		{name: "string param latin1 client", table: "l", strict: true, names: "latin1", sql: "VALUES (?)", arg: ptr(types.NewString(bad)), hex: "E282ACC281C3BF"},
		{name: "string param utf8mb4 client", table: "l", strict: true, sql: "VALUES (?)", arg: ptr(types.NewString(bad)), err: bad1366},
		// utf8mb4: validated.
		{name: "blob param utf8mb4", table: "u", strict: true, sql: "VALUES (?)", arg: ptr(types.NewBytes(bad)), err: bad1366},
		{name: "blob param utf8mb4 valid", table: "u", strict: true, sql: "VALUES (?)", arg: ptr(types.NewBytes("\xc3\xa9")), hex: "C3A9"},
		{name: "blob param utf8mb4 nonstrict", table: "u", sql: "VALUES (?)", arg: ptr(types.NewBytes("ab\xe9")), hex: "6162", warns: 1},
		{name: "blob param utf8mb4 nonstrict all bad", table: "u", sql: "VALUES (?)", arg: ptr(types.NewBytes(bad)), hex: "", warns: 1},
		{name: "hex literal utf8mb4", table: "u", strict: true, sql: "VALUES (X'8081FF')", err: bad1366},
		{name: "_binary utf8mb4 long", table: "u", strict: true, sql: "VALUES (_binary X'61E9626364656667')", err: `Incorrect string value: '\xE9bcdef...' for column 'v' at row 1`},
		{name: "varbinary column utf8mb4", table: "u", strict: true, sql: "SELECT b FROM bin ORDER BY id", err: bad1366},
		{name: "second row", table: "u", strict: true, sql: "VALUES ('ok'), (X'E9')", err: `Incorrect string value: '\xE9' for column 'v' at row 2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mode := ""
			if c.strict {
				mode = "STRICT_TRANS_TABLES"
			}
			mustQ(t, s, "SET sql_mode = '"+mode+"'")
			mustQ(t, s, "DELETE FROM "+c.table)
			names := c.names
			if names == "" {
				names = "utf8mb4"
			}
			mustQ(t, s, "SET NAMES "+names)
			q := "INSERT INTO " + c.table + " (v) " + c.sql
			w := &textWriter{}
			var err error
			if c.arg != nil {
				ps, perr := s.Prepare(ctx, q)
				if perr != nil {
					t.Fatal(perr)
				}
				err = s.Execute(ctx, ps.ID, []types.Value{*c.arg}, w)
				s.CloseStmt(ps.ID)
			} else {
				err = s.Query(ctx, q, w)
			}
			warn := mustQ(t, s, "SHOW WARNINGS")
			mustQ(t, s, "SET NAMES utf8mb4")
			if c.err != "" {
				if !sqlerr.Is(err, sqlerr.ErrTruncatedWrongValueForField) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%s: got %v, want 1366 %q", q, err, c.err)
				}
				if out := mustQ(t, s, "SELECT COUNT(*) FROM "+c.table); out != "0\n" {
					t.Fatalf("rows after the error: %q", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if c.warns > 0 && !strings.Contains(w.b.String(), "warnings=") {
				t.Fatalf("%s: no warning in %q", q, w.b.String())
			}
			if c.warns == 0 && strings.Contains(w.b.String(), "warnings=") {
				t.Fatalf("%s: unexpected warning in %q", q, w.b.String())
			}
			if c.warns > 0 {
				if !strings.Contains(warn, "1366") {
					t.Fatalf("SHOW WARNINGS: %q", warn)
				}
			}
			if out := mustQ(t, s, "SELECT HEX(CONVERT(v USING utf8mb4)) FROM "+c.table); out != c.hex+"\n" {
				t.Fatalf("stored %q, want %q", out, c.hex)
			}
		})
	}

	// The latin1 bytes come back unchanged to a latin1 client, and into the MEDIUMTEXT column
	// (nodetable.data in LinkBench) every byte value 0x00-0xFF round-trips.
	var all strings.Builder
	for i := 0; i < 256; i++ {
		all.WriteByte(byte(i))
	}
	mustQ(t, s, "SET sql_mode = 'STRICT_TRANS_TABLES'")
	mustQ(t, s, "DELETE FROM l")
	ps, err := s.Prepare(ctx, "INSERT INTO l (id, m) VALUES (1, ?)")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Execute(ctx, ps.ID, []types.Value{types.NewBytes(all.String())}, &textWriter{}); err != nil {
		t.Fatalf("256 bytes into MEDIUMTEXT latin1: %v", err)
	}
	mustQ(t, s, "SET NAMES latin1")
	if out := mustQ(t, s, "SELECT m FROM l WHERE id = 1"); out != all.String()+"\n" {
		t.Fatalf("latin1 client reads %q", out)
	}
	// character_set_results = NULL (what Connector/J sets): each column in its own charset, so
	// the latin1 column's bytes again, and a utf8mb4 column's UTF-8.
	mustQ(t, s, "SET NAMES utf8mb4")
	mustQ(t, s, "SET character_set_results = NULL")
	if out := mustQ(t, s, "SELECT m FROM l WHERE id = 1"); out != all.String()+"\n" {
		t.Fatalf("character_set_results NULL reads %q", out)
	}
	if out := mustQ(t, s, "SELECT CONVERT(m USING utf8mb4) FROM l WHERE id = 1"); out != types.Latin1Decode(all.String())+"\n" {
		t.Fatalf("character_set_results NULL, utf8mb4 expression reads %q", out)
	}
	mustQ(t, s, "SET NAMES utf8mb4")
	if out := mustQ(t, s, "SELECT CHAR_LENGTH(m) FROM l WHERE id = 1"); out != "256\n" {
		t.Fatalf("CHAR_LENGTH: %q", out)
	}
}

func ptr(v types.Value) *types.Value { return &v }
