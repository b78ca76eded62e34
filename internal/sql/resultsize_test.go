package sql

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// queryOne runs a one-row, one-column query and returns its text ("NULL" for NULL) and the
// session's warnings.
func queryOne(t *testing.T, s *Session, q string) (string, []sqlerr.Warning) {
	t.Helper()
	w := &textWriter{}
	if err := s.Query(context.Background(), q, w); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out, _, _ := strings.Cut(w.b.String(), "\n")
	return out, append([]sqlerr.Warning(nil), s.warnings...)
}

func mustExec(t *testing.T, s *Session, q string) {
	t.Helper()
	if err := s.Query(context.Background(), q, &textWriter{}); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestResultSizeBound: every function whose result can outgrow its arguments returns NULL with
// warning 1301 once the result would pass max_allowed_packet, as MySQL does, and builds nothing
// that large; results within the limit are unchanged.
func TestResultSizeBound(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	const limit = 1 << 16
	// Only SET GLOBAL changes max_allowed_packet (1621 for SESSION); a new session takes it.
	mustExec(t, s, "SET GLOBAL max_allowed_packet = 65536")
	s = db.NewSession(2, "root", "localhost", "")
	mustExec(t, s, "SET @big = REPEAT('ab', 20000)") // 40,000 bytes: fits, twice does not
	tests := []struct {
		name, over, within string
	}{
		{"repeat", "SELECT REPEAT('ab', 40000)", "SELECT LENGTH(REPEAT('ab', 30000))"},
		{"lpad", "SELECT LPAD('a', 20000, 'b')", "SELECT LENGTH(LPAD('a', 16000, 'b'))"},
		{"rpad", "SELECT RPAD(CAST('a' AS BINARY), 70000, 'b')", "SELECT LENGTH(RPAD(CAST('a' AS BINARY), 60000, 'b'))"},
		{"space", "SELECT SPACE(70000)", "SELECT LENGTH(SPACE(60000))"},
		{"replace", "SELECT REPLACE(@big, 'a', 'xyz')", "SELECT LENGTH(REPLACE(@big, 'a', 'x'))"},
		{"concat", "SELECT CONCAT(@big, @big)", "SELECT LENGTH(CONCAT(@big, 'x'))"},
		{"concat_ws", "SELECT CONCAT_WS(',', @big, @big)", "SELECT LENGTH(CONCAT_WS(',', @big, 'x'))"},
		{"insert", "SELECT INSERT(@big, 1, 1, @big)", "SELECT LENGTH(INSERT(@big, 1, 1, 'xy'))"},
		{"to_base64", "SELECT TO_BASE64(CONCAT(@big, LEFT(@big, 10000)))", "SELECT LENGTH(TO_BASE64(@big))"},
		{"hex", "SELECT HEX(@big)", "SELECT LENGTH(HEX(LEFT(@big, 30000)))"},
		{"quote", "SELECT QUOTE(REPEAT('''', 40000))", "SELECT LENGTH(QUOTE(@big))"},
		{"export_set", "SELECT EXPORT_SET(5, REPEAT('y', 1100), 'n')", "SELECT LENGTH(EXPORT_SET(5, REPEAT('y', 900), 'n'))"},
		{"make_set", "SELECT MAKE_SET(3, @big, @big)", "SELECT LENGTH(MAKE_SET(1, @big, @big))"},
		{"lower", "SELECT LOWER(REPEAT('Ⱥ', 30000))", "SELECT LENGTH(LOWER(@big))"},
		{"json_array", "SELECT JSON_ARRAY(@big, @big)", "SELECT LENGTH(JSON_ARRAY(@big))"},
		{"json_object", "SELECT JSON_OBJECT('a', @big, 'b', @big)", "SELECT LENGTH(JSON_OBJECT('a', @big))"},
		{"json_set", "SELECT JSON_SET('[]', '$[0]', @big, '$[1]', @big)", "SELECT LENGTH(JSON_SET('[]', '$[0]', @big))"},
		{"regexp_replace", "SELECT REGEXP_REPLACE(@big, 'a', 'xyz')", "SELECT LENGTH(REGEXP_REPLACE(@big, 'a', 'x'))"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warns := queryOne(t, s, tc.over)
			if got != "NULL" {
				t.Errorf("%s = %.40q..., want NULL", tc.over, got)
			}
			want := "Result of " + tc.name + "() was larger than max_allowed_packet (65536) - truncated"
			if len(warns) != 1 || warns[0].Code != sqlerr.ErrWarnAllowedPacketOverflow || warns[0].Message != want {
				t.Errorf("%s: warnings %v, want one 1301 %q", tc.over, warns, want)
			}
			got, warns = queryOne(t, s, tc.within)
			if got == "NULL" || len(warns) != 0 {
				t.Errorf("%s = %s with warnings %v, want a length", tc.within, got, warns)
			}
		})
	}
	_ = limit
}

// TestReplaceSizeCheckedFirst is reproduction 3 of issue 13: REPLACE of ten million matches by
// 1,000 bytes would build 10 GB; it must be NULL with 1301, sized before anything is allocated.
func TestReplaceSizeCheckedFirst(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	q := "SELECT LENGTH(REPLACE(REPEAT('a',10000000),'a',REPEAT('b',1000)))"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, warns := queryOne(t, s, q)
	runtime.ReadMemStats(&after)
	if got != "NULL" {
		t.Fatalf("got %s, want NULL", got)
	}
	if len(warns) != 1 || warns[0].Code != sqlerr.ErrWarnAllowedPacketOverflow ||
		warns[0].Message != "Result of replace() was larger than max_allowed_packet (67108864) - truncated" {
		t.Fatalf("warnings %v", warns)
	}
	// REPEAT's 10 MB argument is built; the 10 GB result must not be. 200 MB is generous.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
		t.Fatalf("allocated %d bytes", alloc)
	}
}

// TestInListIntegerSet: an IN list of integer literals is searched, not scanned, with the same
// results as comparing each element (NULLs, NOT IN, unsigned and non-integer operands).
func TestInListIntegerSet(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	mustExec(t, s, "CREATE DATABASE d")
	mustExec(t, s, "USE d")
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, v INT, u BIGINT UNSIGNED, s VARCHAR(10), f DOUBLE)")
	mustExec(t, s, "INSERT INTO t VALUES (1, 5, 18446744073709551615, '5', 5.0), (2, 7, 7, '7x', 7.5), (3, NULL, 3, '3', 3.0)")
	list := "(9, 8, 5, 3, 11, 12, 13, 14, 15, 16)"
	for _, tc := range []struct{ q, want string }{
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE v IN " + list, "1"},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE v NOT IN " + list, "2"},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE u IN " + list, "3"},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE s IN " + list, "1,3"},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE f IN " + list, "1,3"},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE id IN " + list, "3"},
		{"SELECT GROUP_CONCAT(COALESCE(v IN (1, 2, 3, 4, 6, 8, 9, 10, NULL), 'n') ORDER BY id) FROM t", "n,n,n"},
		{"SELECT GROUP_CONCAT(COALESCE(v IN (1, 2, 3, 4, 5, 8, 9, 10, NULL), 'n') ORDER BY id) FROM t", "1,n,n"},
		{"SELECT GROUP_CONCAT(COALESCE(v NOT IN (1, 2, 3, 4, 5, 8, 9, 10, NULL), 'n') ORDER BY id) FROM t", "0,n,n"},
	} {
		if got, _ := queryOne(t, s, tc.q); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.q, got, tc.want)
		}
	}
}
