package sql

import (
	"github.com/kiln-db/kiln/internal/sql/sqltext"
)

// rewriteJSONTable turns each JSON_TABLE(...) of a statement's text into the derived table the
// planner reads as a table function (sqltext.RewriteJSONTable; docs/decisions.md). Only text that
// contains "json_table" in some letter case pays for the lexing: the point-select path never does.
func (s *Session) rewriteJSONTable(text string) (string, error) {
	if !sqltext.HasJSONTable(text) {
		return text, nil
	}
	_, mode := s.sqlMode()
	return sqltext.RewriteJSONTable(text, sqltext.Mode{NoBackslashEscapes: mode.HasNoBackslashEscapesMode(), ANSIQuotes: mode.HasANSIQuotesMode()})
}
