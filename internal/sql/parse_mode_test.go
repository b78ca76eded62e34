package sql

import (
	"context"
	"strings"
	"testing"
)

// TestParseFollowsSQLMode: the parser's mode (computed only when sql_mode changes) follows every
// change of the session's sql_mode, back and forth.
func TestParseFollowsSQLMode(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	for i, c := range []struct{ q, want string }{
		{`SELECT "x" || 'y'`, "0\n"}, // default mode: a string, logical OR
		{`SET sql_mode = 'ANSI_QUOTES,PIPES_AS_CONCAT'`, "ok"},
		{`SELECT 'x' || 'y'`, "xy\n"},
		{`SELECT "x"`, "error: ERROR 1054 (42S22): Unknown column 'x'"},
		{`SET sql_mode = ''`, "ok"},
		{`SELECT "x" || 'y'`, "0\n"},
		{`SET SESSION sql_mode = 'pipes_as_concat'`, "ok"},
		{`SELECT "x" || 'y'`, "xy\n"},
		{`SET sql_mode = DEFAULT`, "ok"},
		{`SELECT "x" || 'y'`, "0\n"},
	} {
		w := &textWriter{}
		got := ""
		if err := s.Query(ctx, c.q, w); err != nil {
			got = "error: " + err.Error()
		} else {
			got = w.b.String()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("step %d %s: got %q, want %q", i, c.q, got, c.want)
		}
	}
}
