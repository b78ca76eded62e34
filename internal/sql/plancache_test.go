package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/proto"
)

// TestPlanCache: text statements that differ only in literals run on one cached parse and plan
// (Kiln_plan_cache_hits counts them) with the results the literal statement gives; statements
// where a parameter would change the meaning are never served from the cache.
func TestPlanCache(t *testing.T) {
	ss := lockSessions(t, 2)
	a, other := ss[0], ss[1]
	db := a.s.db
	a.expect("CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(20), d DECIMAL(6,2), u BIGINT UNSIGNED, KEY (name))", "ok affected=0")
	a.expect("INSERT INTO p VALUES (1, 'a''b', 1.50, 18446744073709551615), (2, 'abc', 2.25, 3), (3, 'x\\ny', 0, 0), (4, 'zé', 0, 0)", "ok affected=4")
	hits := func() uint64 { h, _ := db.PlanCacheStats(); return h }

	for _, tc := range []struct {
		name       string
		first      string // learns the key (never a hit)
		then, want string // the same shape with other literals
		hit        bool   // whether then must be served from the cache
	}{
		{"point select", "SELECT name FROM p WHERE id = 1", "SELECT name FROM p WHERE id = 2", "abc", true},
		{"escaped string", "SELECT id FROM p WHERE name = 'zz'", "SELECT id FROM p WHERE name = 'a\\'b'", "1", true},
		{"doubled quote and newline", "SELECT id FROM p WHERE name = 'q'", "SELECT id FROM p WHERE name = \"x\\ny\"", "3", true},
		{"comments are part of the key", "/* web */ SELECT name FROM p WHERE id = 1 -- x", "/* web */ SELECT name FROM p WHERE id = 2 -- x", "abc", true},
		{"optimizer hints are never cached", "SELECT /*+ MAX_EXECUTION_TIME(1000) */ name FROM p WHERE id = 1", "SELECT /*+ MAX_EXECUTION_TIME(1000) */ name FROM p WHERE id = 2", "abc", false},
		{"UTF-8 string", "SELECT id FROM p WHERE name = 'ü'", "SELECT id FROM p WHERE name = 'zé'", "4", true},
		{"decimal", "SELECT id FROM p WHERE d = 9.99", "SELECT id FROM p WHERE d = 1.5", "1", true},
		{"beyond int64", "SELECT id FROM p WHERE u = 5", "SELECT id FROM p WHERE u = 18446744073709551615", "1", false}, // another kind: another key
		{"range and limit", "SELECT id FROM p WHERE id BETWEEN 1 AND 2 ORDER BY id LIMIT 1", "SELECT id FROM p WHERE id BETWEEN 2 AND 3 ORDER BY id LIMIT 5", "2\n3", true},
		{"IN list", "SELECT id FROM p WHERE id IN (1, 9) ORDER BY id", "SELECT id FROM p WHERE id IN (3, 2) ORDER BY id", "2\n3", true},
		{"hex", "SELECT id FROM p WHERE name = X'7a7a'", "SELECT id FROM p WHERE name = 0x616263", "2", true},
		{"select-list literal names the column", "SELECT 1 FROM p WHERE id = 1", "SELECT 2 FROM p WHERE id = 1", "2", false},
		{"ORDER BY position", "SELECT id, name FROM p ORDER BY 2 LIMIT 1", "SELECT id, name FROM p ORDER BY 1 LIMIT 1", "1\ta'b", false},
		{"LIKE pattern", "SELECT id FROM p WHERE name LIKE '%c'", "SELECT id FROM p WHERE name LIKE 'ab%'", "2", false},
		{"information_schema", "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'zz'", "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'p'", "1", false},
		{"update", "UPDATE p SET d = d + 0.75 WHERE id = 9", "UPDATE p SET d = d + 0.25 WHERE id = 3", "ok affected=1", true},
		{"insert", "INSERT INTO p (id, name) VALUES (10, 'k')", "INSERT INTO p (id, name) VALUES (11, 'l')", "ok affected=1", true},
		{"delete", "DELETE FROM p WHERE id = 10", "DELETE FROM p WHERE id = 11", "ok affected=1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.run(tc.first)
			before := hits()
			a.expect(tc.then, tc.want)
			if got := hits() - before; (got == 1) != tc.hit {
				t.Errorf("%s: %d cache hits, want hit=%v", tc.then, got, tc.hit)
			}
		})
	}
	a.expect("SELECT d FROM p WHERE id = 3", "0.25")

	// DDL: the cached plan is made again on the new definition.
	a.expect("SELECT * FROM p WHERE id = 2", "2\tabc\t2.25\t3")
	other.expect("ALTER TABLE p ADD COLUMN e INT DEFAULT 7", "ok affected=0")
	before := hits()
	a.expect("SELECT * FROM p WHERE id = 1", "1\ta'b\t1.50\t18446744073709551615\t7")
	if hits() != before+1 {
		t.Error("the statement after DDL was not served from the (re-planned) cache entry")
	}

	// Another default database: another entry (names resolve there).
	a.expect("CREATE DATABASE d2", "ok affected=1")
	a.expect("CREATE TABLE d2.p (id INT PRIMARY KEY, name VARCHAR(20))", "ok affected=0")
	a.expect("INSERT INTO d2.p VALUES (2, 'other')", "ok affected=1")
	a.expect("USE d2", "ok affected=0")
	a.expect("SELECT name FROM p WHERE id = 2", "other")
	a.expect("USE d", "ok affected=0")
	a.expect("SELECT name FROM p WHERE id = 2", "abc")

	// sql_mode changes lexing: NO_BACKSLASH_ESCAPES keeps the backslash in the literal.
	a.expect("INSERT INTO p (id, name) VALUES (20, 'b\\\\n')", "ok affected=1")
	a.expect("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'", "ok affected=0")
	a.expect("SELECT id FROM p WHERE name = 'b\\n'", "20")
	a.expect("SET SESSION sql_mode = DEFAULT", "ok affected=0")

	// kiln_plan_cache_size = 0 turns it off.
	a.expect("SET SESSION kiln_plan_cache_size = 0", "ok affected=0")
	before = hits()
	a.expect("SELECT name FROM p WHERE id = 1", "a'b")
	a.expect("SELECT name FROM p WHERE id = 2", "abc")
	if hits() != before {
		t.Error("cache used with kiln_plan_cache_size = 0")
	}
}

// TestPlanCacheBounded: a session keeps at most kiln_plan_cache_size keys.
func TestPlanCacheBounded(t *testing.T) {
	a := lockSessions(t, 1)[0]
	a.expect("SET SESSION kiln_plan_cache_size = 3", "ok affected=0")
	for _, q := range []string{
		"SELECT v FROM t WHERE id = 1", "SELECT v FROM t WHERE id > 1", "SELECT v FROM t WHERE id < 1",
		"SELECT v FROM t WHERE id <> 1", "SELECT v FROM t WHERE id >= 1",
	} {
		a.run(q)
	}
	if n := len(a.s.pcache.entries); n != 3 {
		t.Fatalf("%d cached keys, want 3", n)
	}
	if _, ok := a.s.pcache.entries[planCacheKey{"SELECT v FROM t WHERE id = ?\x00i", "d"}]; ok {
		t.Error("the oldest key was not evicted")
	}
}

// TestPlanCacheBulkInsert: a many-row INSERT runs on its cached parse, its values bound as
// parameters, and gives the rows the literal statement gives; a session's cache stays within its
// weight however large the INSERTs are.
func TestPlanCacheBulkInsert(t *testing.T) {
	a := lockSessions(t, 1)[0]
	db := a.s.db
	a.expect("CREATE TABLE b (id INT PRIMARY KEY, s VARCHAR(10), x VARBINARY(4)) DEFAULT CHARSET=latin1", "ok affected=0")
	insert := func(from, n int) string {
		var sb strings.Builder
		sb.WriteString("INSERT INTO b VALUES ")
		for i := from; i < from+n; i++ {
			if i > from {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, 'r%d', x'%04x')", i, i, i)
		}
		return sb.String()
	}
	h0, _ := db.PlanCacheStats()
	a.expect(insert(0, 500), "ok affected=500")
	a.expect(insert(500, 500), "ok affected=500")
	if h, _ := db.PlanCacheStats(); h != h0+1 {
		t.Errorf("the second 500-row INSERT was not served from the cache (%d hits)", h-h0)
	}
	a.expect("SELECT COUNT(*), SUM(id), MAX(s), HEX(MAX(x)) FROM b", "1000	499500	r999	03E7")
	a.expect("SELECT s, HEX(x) FROM b WHERE id = 777", "r777	0309")
	// Larger than a session's cache may hold: remembered as not cacheable, the cache within bounds.
	a.expect(insert(1000, 12000), "ok affected=12000")
	if w := a.s.pcache.weight; w > maxCacheWeight {
		t.Errorf("cache weight %d over %d", w, maxCacheWeight)
	}
	a.expect("SELECT COUNT(*) FROM b", "13000")
}

// moreWriter records, beside the text, whether each OK packet said that more results follow.
type moreWriter struct {
	textWriter
	more []bool
}

func (w *moreWriter) OK(ok proto.OK, more bool) error {
	w.more = append(w.more, more)
	return w.textWriter.OK(ok, more)
}

// TestPlanCacheMultiStatement: the first statement of a multi-statement text (LinkStoreMysql's
// "INSERT ...; commit;", with autocommit off) runs on its cached parse and the statements after it
// run as parsed, each result marked as followed by more but the last; a text whose later statement
// is not valid, or a client without CLIENT_MULTI_STATEMENTS, still gets 1064 with nothing run.
func TestPlanCacheMultiStatement(t *testing.T) {
	ss := lockSessions(t, 2)
	a, other := ss[0], ss[1]
	db := a.s.db
	hits := func() uint64 { h, _ := db.PlanCacheStats(); return h }
	a.expect("CREATE TABLE n (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT, data MEDIUMTEXT) DEFAULT CHARSET=latin1", "ok affected=0")
	a.expect("SET autocommit = 0", "ok affected=0")
	for i, tc := range []struct{ q, want string }{
		{"INSERT INTO n (v, data) VALUES (1, x'41'), (2, x'e9'); commit;", "ok affected=2 last_insert_id=1\nok affected=0"},
		{"INSERT INTO n (v, data) VALUES (3, x'42'), (4, x'ff'); commit;", "ok affected=2 last_insert_id=3\nok affected=0"},
		{"UPDATE n SET v = 10, data = x'43' WHERE id = 1; commit;", "ok affected=1\nok affected=0"},
		{"UPDATE n SET v = 20, data = x'44' WHERE id = 2; commit;", "ok affected=1\nok affected=0"},
		{"DELETE FROM n WHERE id = 3; commit;", "ok affected=1\nok affected=0"},
		{"DELETE FROM n WHERE id = 4; commit;", "ok affected=1\nok affected=0"},
	} {
		before := hits()
		w := &moreWriter{}
		if err := a.s.Query(context.Background(), tc.q, w); err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		if got := strings.TrimSuffix(w.b.String(), "\n"); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.q, got, tc.want)
		}
		if fmt.Sprint(w.more) != "[true false]" {
			t.Errorf("%s: more flags %v, want [true false]", tc.q, w.more)
		}
		if hit := hits() - before; hit != uint64(i%2) {
			t.Errorf("%s: %d cache hits, want %d", tc.q, hit, i%2)
		}
	}
	// Committed by the text's own COMMIT: another session sees the rows.
	other.expect("SELECT id, v, HEX(data) FROM n ORDER BY id", "1\t10\t43\n2\t20\t44")

	// A syntax error after a cached statement: 1064 for the whole text, and nothing of it ran.
	a.expect("INSERT INTO n (v, data) VALUES (5, x'45'), (6, x'46'); commit junk;", "error 1064")
	a.expect("SELECT COUNT(*) FROM n", "2")
	// A client without CLIENT_MULTI_STATEMENTS: 1064, nothing run.
	a.s.SingleStatement = true
	a.expect("INSERT INTO n (v, data) VALUES (7, x'47'), (8, x'48'); commit;", "error 1064")
	a.s.SingleStatement = false
	a.expect("SELECT COUNT(*) FROM n", "2")
	a.expect("ROLLBACK", "ok affected=0")
	// An error stops the text: the COMMIT after the failed statement does not run.
	before := hits()
	a.expect("INSERT INTO n (v, data) VALUES (9, x'49'); INSERT INTO n (id, v) VALUES (1, 0); commit;", "error 1062")
	a.expect("INSERT INTO n (v, data) VALUES (9, x'4a'); INSERT INTO n (id, v) VALUES (1, 0); commit;", "error 1062")
	if hits() != before+1 {
		t.Errorf("%d cache hits, want 1", hits()-before)
	}
	a.expect("SELECT COUNT(*) FROM n", "4")
	other.expect("SELECT COUNT(*) FROM n", "2")
	a.expect("ROLLBACK", "ok affected=0")
	other.expect("SELECT COUNT(*) FROM n", "2")
}

// TestPlanCacheValueKinds: bulk INSERTs whose rows mix quoted and hex payloads (LinkStoreMysql
// quotes a payload of letters and digits, else sends it as hex) share one cached entry, and each
// row's value is converted as its own literal would be: hex bytes stored unchanged in a latin1
// column, refused (1366) in a utf8mb4 one when they are not UTF-8.
func TestPlanCacheValueKinds(t *testing.T) {
	a := lockSessions(t, 1)[0]
	db := a.s.db
	hits := func() uint64 { h, _ := db.PlanCacheStats(); return h }
	a.expect("CREATE TABLE l (id INT PRIMARY KEY, data VARCHAR(10), u VARCHAR(10) CHARACTER SET utf8mb4) DEFAULT CHARSET=latin1", "ok affected=0")
	a.expect("INSERT INTO l (id, data, u) VALUES (1, 'ab', 'x'), (2, x'e9', x'c3a9')", "ok affected=2")
	h := hits()
	a.expect("INSERT INTO l (id, data, u) VALUES (3, x'ff80', 'y'), (4, '', x'41')", "ok affected=2")
	a.expect("INSERT INTO l (id, data, u) VALUES (5, 7, 8.5), (6, 'z', x'80')", "error 1366")
	if got := hits() - h; got != 2 {
		t.Errorf("%d cache hits, want 2", got)
	}
	a.expect("SELECT id, HEX(data), HEX(u) FROM l ORDER BY id", "1\t6162\t78\n2\tE9\tC3A9\n3\tFF80\t79\n4\t\t41")
}
