package mysql

// Tests with the real go-sql-driver/mysql client.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
)

func init() {
	// The driver logs connection failures we provoke on purpose.
	_ = gomysql.SetLogger(log.New(io.Discard, "", 0))
}

func openDB(t testing.TB, addr, user, password, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/?timeout=5s&readTimeout=20s&writeTimeout=20s", user, password, addr)
	if params != "" {
		dsn += "&" + params
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDriverAuth(t *testing.T) {
	tests := []struct {
		name     string
		plugin   string
		fullAuth bool
		user, pw string
		wantErr  string // substring; "" = success
	}{
		{name: "native empty", plugin: NativePassword, user: "root"},
		{name: "native", plugin: NativePassword, user: "alice", pw: "secret"},
		{name: "native wrong", plugin: NativePassword, user: "alice", pw: "nope",
			wantErr: "Error 1045 (28000): Access denied for user 'alice'@'127.0.0.1' (using password: YES)"},
		{name: "native missing password", plugin: NativePassword, user: "alice",
			wantErr: "Access denied for user 'alice'@'127.0.0.1' (using password: NO)"},
		{name: "native unknown user", plugin: NativePassword, user: "mallory", pw: "x", wantErr: "Error 1045"},
		{name: "sha2 empty", plugin: CachingSHA2Password, user: "root"},
		{name: "sha2 fast auth", plugin: CachingSHA2Password, user: "alice", pw: "secret"},
		{name: "sha2 long password", plugin: CachingSHA2Password, user: "bob", pw: "pässwörd with spaces and a long tail 0123456789"},
		{name: "sha2 wrong", plugin: CachingSHA2Password, user: "alice", pw: "secreT",
			wantErr: "Error 1045 (28000): Access denied for user 'alice'@'127.0.0.1' (using password: YES)"},
		{name: "sha2 unexpected empty", plugin: CachingSHA2Password, user: "alice",
			wantErr: "(using password: NO)"},
		{name: "sha2 unknown user", plugin: CachingSHA2Password, user: "mallory", wantErr: "Error 1045"},
		{name: "sha2 full auth (RSA)", plugin: CachingSHA2Password, fullAuth: true, user: "alice", pw: "secret"},
		{name: "sha2 full auth long", plugin: CachingSHA2Password, fullAuth: true, user: "bob", pw: "pässwörd with spaces and a long tail 0123456789"},
		{name: "sha2 full auth wrong", plugin: CachingSHA2Password, fullAuth: true, user: "alice", pw: "secret!",
			wantErr: "Error 1045"},
		{name: "sha2 full auth empty", plugin: CachingSHA2Password, fullAuth: true, user: "root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHandler()
			h.defaultPlugin = tt.plugin // the accounts' plugin
			_, addr := startServer(t, Config{AuthPlugin: tt.plugin, CachingSHA2FullAuth: tt.fullAuth}, h)
			db := openDB(t, addr, tt.user, tt.pw, "")
			db.SetMaxIdleConns(0)
			err := db.Ping()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				// A second connection: the fast path of caching_sha2_password's cache.
				if err := db.Ping(); err != nil {
					t.Fatal(err)
				}
				if info := h.lastInfo(); info.User != tt.user || info.Host != "127.0.0.1" ||
					info.Capabilities&pmysql.ClientProtocol41 == 0 || info.ConnID == 0 {
					t.Fatalf("ConnInfo %+v", info)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDriverConnInfoAndOpenError(t *testing.T) {
	h := newFakeHandler()
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "alice", "secret", "connectionAttributes=app:test,k:v")
	db.SetMaxIdleConns(0)
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	info := h.lastInfo()
	if info.Attrs["app"] != "test" || info.Attrs["_client_name"] != "Go-MySQL-Driver" || info.Collation == 0 {
		t.Fatalf("ConnInfo %+v", info)
	}

	h.locked(func() { h.openErr = errors.New("boom") })
	db2 := openDB(t, addr, "alice", "secret", "")
	mustErrCode(t, db2.Ping(), 1105)
}

func TestDriverTextQuery(t *testing.T) {
	h := newFakeHandler()
	h.stmts["SELECT everything"] = rowsOf(typedColumns, typedRows...)
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "root", "", "")

	rows, err := db.Query("SELECT everything")
	if err != nil {
		t.Fatal(err)
	}
	got := scanStrings(t, rows)
	want := [][]string{typedTextWant, typedTextNulls}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}

	// Errors keep the connection usable.
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), "nonsense")
	mustErrCode(t, err, 1064)
	if err := conn.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// typedColumns covers each wire encoding; typedRows holds one row of values and one of NULLs.
var typedColumns = []proto.Column{
	{Name: "tiny", Type: pmysql.TypeTiny},
	{Name: "short", Type: pmysql.TypeShort},
	{Name: "long", Type: pmysql.TypeLong},
	{Name: "int24", Type: pmysql.TypeInt24, Flags: uint16(pmysql.UnsignedFlag)},
	{Name: "bigint", Type: pmysql.TypeLonglong},
	{Name: "ubigint", Type: pmysql.TypeLonglong, Flags: uint16(pmysql.UnsignedFlag)},
	{Name: "year", Type: pmysql.TypeYear},
	{Name: "float", Type: pmysql.TypeFloat},
	{Name: "double", Type: pmysql.TypeDouble},
	{Name: "decimal", Type: pmysql.TypeNewDecimal, Decimals: 2},
	{Name: "date", Type: pmysql.TypeDate},
	{Name: "datetime", Type: pmysql.TypeDatetime, Decimals: 6},
	{Name: "timestamp", Type: pmysql.TypeTimestamp},
	{Name: "time", Type: pmysql.TypeDuration},
	{Name: "time6", Type: pmysql.TypeDuration, Decimals: 6},
	{Name: "varchar", Type: pmysql.TypeVarString, Charset: 255},
	{Name: "blob", Type: pmysql.TypeBlob, Charset: 63, Flags: uint16(pmysql.BinaryFlag)},
	{Name: "json", Type: pmysql.TypeJSON},
	{Name: "mismatch_int_in_double", Type: pmysql.TypeDouble},
	{Name: "mismatch_str_in_int", Type: pmysql.TypeLong},
	{Name: "zero_date", Type: pmysql.TypeDatetime},
}

var typedRows = [][]types.Value{
	{
		types.NewInt(-128), types.NewInt(-32768), types.NewInt(math.MinInt32), types.NewInt(1<<24 - 1),
		types.NewInt(math.MinInt64), types.NewUint(math.MaxUint64), types.NewInt(2024),
		types.NewFloat32(0.1), types.NewFloat(1.0 / 3), types.NewDecimal(decimal.RequireFromString("-12.5"), 2),
		types.NewDate(types.PackTime(2024, 2, 29, 0, 0, 0, 0)),
		types.NewDatetime(types.PackTime(1999, 12, 31, 23, 59, 58, 123456), 6),
		types.NewDatetime(types.PackTime(2038, 1, 19, 3, 14, 7, 0), 0),
		types.NewDuration(-(838*3600+59*60+59)*1e6, 0), types.NewDuration((25*3600+1)*1e6+5, 6),
		types.NewString("héllo, wörld"), types.NewBytes("\x00\xff\x01"), types.NewString(`{"a": [1, 2]}`),
		types.NewInt(7), types.NewString("42"), types.NewDatetime(0, 0),
	},
	make([]types.Value, len(typedColumns)),
}

var typedTextWant = []string{
	"-128", "-32768", "-2147483648", "16777215", "-9223372036854775808", "18446744073709551615", "2024",
	"0.1", "0.3333333333333333", "-12.50", "2024-02-29", "1999-12-31 23:59:58.123456",
	"2038-01-19 03:14:07", "-838:59:59", "25:00:01.000005", "héllo, wörld", "\x00\xff\x01",
	`{"a": [1, 2]}`, "7", "42", "0000-00-00 00:00:00",
}

var typedTextNulls = strings.Split(strings.Repeat("NULL,", len(typedColumns)-1)+"NULL", ",")

func scanStrings(t testing.TB, rows *sql.Rows) [][]string {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		raw := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, r := range raw {
			if r == nil {
				row[i] = "NULL"
			} else {
				row[i] = string(r)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDriverBinaryRows(t *testing.T) {
	h := newFakeHandler()
	h.stmts["SELECT everything"] = rowsOf(typedColumns, typedRows...)
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "root", "", "")

	st, err := db.Prepare("SELECT everything")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Query()
	if err != nil {
		t.Fatal(err)
	}
	got := scanStrings(t, rows)
	// The driver turns binary values back into the same text (dates and times using the
	// column's decimals).
	want := typedTextWant
	if fmt.Sprint(got) != fmt.Sprint([][]string{want, typedTextNulls}) {
		t.Fatalf("got\n%q\nwant\n%q", got, [][]string{want, typedTextNulls})
	}

	// Go types as the driver decodes them from the binary protocol.
	rows, err = st.Query()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	rows.Next()
	vals := make([]any, len(typedColumns))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	checks := map[int]any{
		0: int64(-128), 1: int64(-32768), 2: int64(math.MinInt32), 3: int64(1<<24 - 1),
		4: int64(math.MinInt64), 6: int64(2024), 7: float32(0.1), 8: 1.0 / 3, 18: float64(7), 19: int64(42),
	}
	for i, want := range checks {
		if vals[i] != want {
			t.Errorf("column %s: got %T %v, want %T %v", typedColumns[i].Name, vals[i], vals[i], want, want)
		}
	}
}

func TestDriverMultiStatements(t *testing.T) {
	h := newFakeHandler()
	h.stmts["SELECT 1"] = rowsOf([]proto.Column{{Name: "1", Type: pmysql.TypeLonglong}}, []types.Value{types.NewInt(1)})
	h.stmts["SELECT 2"] = rowsOf([]proto.Column{{Name: "a", Type: pmysql.TypeLonglong}, {Name: "b", Type: pmysql.TypeVarString}},
		[]types.Value{types.NewInt(2), types.NewString("x")}, []types.Value{types.NewInt(3), types.Null})
	h.stmts["UPDATE t"] = okOf(proto.OK{AffectedRows: 5, LastInsertID: 9})
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "root", "", "multiStatements=true")

	rows, err := db.Query("SELECT 1; UPDATE t; SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sets [][]string
	for {
		cols, _ := rows.Columns()
		set := []string{strings.Join(cols, ",")}
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var r []string
			for _, v := range vals {
				r = append(r, fmt.Sprintf("%s %v", v.String, v.Valid))
			}
			set = append(set, strings.Join(r, "|"))
		}
		sets = append(sets, set)
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := "[[1 1 true] [a,b 2 true|x true 3 true| false]]"
	if fmt.Sprint(sets) != want {
		t.Fatalf("got %v, want %v", sets, want)
	}

	res, err := db.Exec("UPDATE t; UPDATE t")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 5 {
		t.Fatalf("affected %d, want 5 (the last result)", n)
	}

	// An error in the middle ends the response; the connection stays usable.
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), "UPDATE t; nonsense; UPDATE t")
	mustErrCode(t, err, 1064)
	var one int
	if err := conn.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after error: %v %d", err, one)
	}
}

func TestDriverPreparedParams(t *testing.T) {
	h := newFakeHandler()
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "root", "", "")

	when := time.Date(2021, 3, 4, 5, 6, 7, 890000000, time.UTC)
	args := []any{int64(-5), uint64(math.MaxUint64), 2.5, true, false, "text", []byte("\x00bin"), nil,
		[]byte(nil), when, int64(math.MaxInt64), "", sql.NullInt64{}, float32(1.5)}
	q := "INSERT" + strings.Repeat(" ?", len(args))
	for round := range 2 { // the second execution does not resend types
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(round, err)
		}
		got := h.lastExecArgs()
		want := []types.Value{types.NewInt(-5), types.NewUint(math.MaxUint64), types.NewFloat(2.5),
			types.NewInt(1), types.NewInt(0), types.NewString("text"), types.NewString("\x00bin"),
			types.Null, types.Null, types.NewString("2021-03-04 05:06:07.89"), types.NewInt(math.MaxInt64),
			types.NewString(""), types.Null, types.NewFloat(1.5)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: args\n%v\nwant\n%v", round, got, want)
		}
		for i := range want {
			if got[i].K != want[i].K {
				t.Fatalf("round %d arg %d: kind %d, want %d", round, i, got[i].K, want[i].K)
			}
		}
	}

	// A statement reused with new types.
	st, err := db.Prepare("INSERT ? ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, a := range [][]any{{1, "a"}, {"b", 2.5}, {nil, nil}} {
		if _, err := st.Exec(a...); err != nil {
			t.Fatal(err)
		}
		got := h.lastExecArgs()
		if fmt.Sprint(got) != fmt.Sprint(typesOf(a...)) {
			t.Fatalf("args %v, want %v", got, a)
		}
	}

	// Errors.
	_, err = db.Prepare("BAD ?")
	mustErrCode(t, err, 1064)
	_, err = db.Prepare("PANIC ?")
	mustErrCode(t, err, 1105)
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
}

func typesOf(a ...any) []types.Value {
	var out []types.Value
	for _, v := range a {
		switch v := v.(type) {
		case nil:
			out = append(out, types.Null)
		case int:
			out = append(out, types.NewInt(int64(v)))
		case string:
			out = append(out, types.NewString(v))
		case float64:
			out = append(out, types.NewFloat(v))
		}
	}
	return out
}

func TestDriverLongData(t *testing.T) {
	h := newFakeHandler()
	echo := func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		cols := make([]proto.Column, len(args))
		for i := range cols {
			cols[i] = proto.Column{Name: fmt.Sprint(i), Type: pmysql.TypeBlob, Charset: 63}
		}
		if err := w.Columns(cols); err != nil {
			return err
		}
		if err := w.Row(args); err != nil {
			return err
		}
		return w.EndRows(0, false)
	}
	h.stmts["SELECT ?, ?"] = echo
	_, addr := startServer(t, Config{MaxAllowedPacket: 1 << 20}, h)
	// A small client-side max_allowed_packet makes the driver send big arguments as long data,
	// in several COM_STMT_SEND_LONG_DATA packets.
	db := openDB(t, addr, "root", "", "maxAllowedPacket=4096")

	big := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB
	var a, b []byte
	if err := db.QueryRow("SELECT ?, ?", big, "small").Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, big) || string(b) != "small" {
		t.Fatalf("long data: got %d bytes and %q", len(a), b)
	}
	if got := h.lastExecArgs(); got[0].K != types.KindString {
		t.Fatalf("kind %d", got[0].K)
	}
	// Long data is for one execution only.
	if err := db.QueryRow("SELECT ?, ?", "x", "y").Scan(&a, &b); err != nil || string(a) != "x" {
		t.Fatalf("after long data: %v %q", err, a)
	}

	// More than the server's max_allowed_packet for one parameter fails the execution, and the
	// connection survives.
	huge := bytes.Repeat([]byte{'z'}, 1<<20+1)
	err := db.QueryRow("SELECT ?, ?", huge, "small").Scan(&a, &b)
	mustErrCode(t, err, 1153)
	if err := db.QueryRow("SELECT ?, ?", "x", "y").Scan(&a, &b); err != nil || string(a) != "x" {
		t.Fatalf("after oversized long data: %v %q", err, a)
	}
}

func TestDriverOversizedPacket(t *testing.T) {
	h := newFakeHandler()
	h.stmts["SELECT 1"] = rowsOf([]proto.Column{{Name: "1", Type: pmysql.TypeLonglong}}, []types.Value{types.NewInt(1)})
	_, addr := startServer(t, Config{MaxAllowedPacket: 1 << 20}, h)
	db := openDB(t, addr, "root", "", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	q := "SELECT '" + strings.Repeat("x", 2<<20) + "'"
	_, err = conn.ExecContext(ctx, q)
	mustErrCode(t, err, 1153)
	if !strings.Contains(err.Error(), "Got a packet bigger than 'max_allowed_packet' bytes") {
		t.Fatal(err)
	}
	// The server closed this connection.
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err == nil {
		t.Fatal("connection still usable after 1153")
	}
	// Others are fine.
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

func TestDriverMaxPlaceholders(t *testing.T) {
	h := newFakeHandler()
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "root", "", "")

	n := maxStmtParams
	q := "INSERT" + strings.Repeat(" ?", n)
	args := make([]any, n)
	for i := range args {
		args[i] = int64(i)
	}
	args[n-2] = nil
	args[n-1] = "last"
	res, err := db.Exec(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := res.RowsAffected(); got != int64(n) {
		t.Fatalf("affected %d", got)
	}
	got := h.lastExecArgs()
	if len(got) != n || got[0].I != 0 || got[n-3].I != int64(n-3) || !got[n-2].IsNull() || got[n-1].S != "last" {
		t.Fatalf("got %d args, last %v %v", len(got), got[n-2], got[n-1])
	}

	_, err = db.Exec(q+" ?", append(args, 1)...)
	mustErrCode(t, err, 1390)
}

func TestDriverStatusAndInitDB(t *testing.T) {
	h := newFakeHandler()
	_, addr := startServer(t, Config{}, h)
	db := openDB(t, addr, "root", "", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	// The driver uses the status flags (SERVER_STATUS_IN_TRANS) in its own checks; it must still
	// work.
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}

	// The DSN's database goes through the handshake; Open's error reaches the client.
	mustErrCode(t, openDBName(t, addr, "nope").Ping(), 1049)
	if err := openDBName(t, addr, "yes").Ping(); err != nil {
		t.Fatal(err)
	}
	if h.lastInfo().DB != "yes" {
		t.Fatalf("ConnInfo.DB %q", h.lastInfo().DB)
	}
}

func openDBName(t testing.TB, addr, name string) *sql.DB {
	db, err := sql.Open("mysql", fmt.Sprintf("root:@tcp(%s)/%s?timeout=5s", addr, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
