package sql

import (
	"context"
	"strings"
	"testing"
)

// TestParserPanicIsAnError: number literals longer than the parser's decimal holds made the TiDB
// parser panic (found by FuzzQuery). Each must answer an error and leave the session working,
// whether the statement reaches the parser or a cached plan's literal substitution.
func TestParserPanicIsAnError(t *testing.T) {
	ss := lockSessions(t, 1)
	s := ss[0]
	long := strings.Repeat("9", 300)
	for _, q := range []string{
		"SET @0=000 " + strings.Repeat("0", 100) + "." + strings.Repeat("0", 100),
		"SELECT " + strings.Repeat("1", 100) + "." + strings.Repeat("1", 100),
		"SELECT 0." + strings.Repeat("0", 200) + "1",
		"SELECT " + long,
		"SELECT 1 FROM t WHERE v = " + long,
	} {
		if got := s.run(q); !strings.HasPrefix(got, "error 1367") {
			t.Errorf("%.50q: got %q, want error 1367 (%v)", q, got, s.s.Query(context.Background(), q, &textWriter{}))
		}
	}
	// The same shape with a short literal first (a cached plan), then the long one.
	s.expect("SELECT 1 + 2", "3")
	if got := s.run("SELECT 1 + " + long); strings.HasPrefix(got, "error 1105") || strings.HasPrefix(got, "panic") {
		t.Errorf("cached shape with a long literal: got %q", got)
	}
	s.expect("SELECT 40 + 2", "42")
}
