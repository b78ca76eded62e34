package sql

import (
	"strings"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Connection character sets. Kiln holds every string as UTF-8; a client whose
// character_set_client is latin1 sends statement text and string parameters in latin1, and one
// whose character_set_results is latin1 reads string results in latin1. MySQL's latin1 is
// Windows-1252 with the five bytes that code page leaves undefined mapped to the C1 controls of the
// same value, so every byte 0x00-0xFF round-trips. Other connection character sets are UTF-8
// (utf8mb4, utf8mb3, ascii) or pass bytes through (binary, character_set_results = NULL).

func (s *Session) charsetVar(name string) string {
	switch name { // read by every statement: remembered (varMemo)
	case "character_set_client":
		return s.memoLower(&s.csClient, svCharsetClient)
	case "character_set_results":
		return s.memoLower(&s.csResults, svCharsetResults)
	}
	return strings.ToLower(types.ToString(s.getSysVar(sysvar.Must(name), false)))
}

var (
	svCharsetClient  = sysvar.Must("character_set_client")
	svCharsetResults = sysvar.Must("character_set_results")
)

// varMemo is a system variable's value as a session last read it, valid while the globals map is
// globals and no session SET ran since (Session.varsGen counts them). Only for variables whose
// value is stored (getSysVar computes a few, such as warning_count, on every read).
type varMemo struct {
	valid   bool
	gen     uint64
	globals *map[string]types.Value
	v       types.Value
	s       string // memoLower's answer
}

// fresh reports whether m still holds the session's value, and marks it so for what the caller
// stores next.
func (s *Session) fresh(m *varMemo) bool {
	g := s.db.globals.vals.Load()
	if m.valid && m.globals == g && m.gen == s.varsGen {
		return true
	}
	m.valid, m.globals, m.gen = true, g, s.varsGen
	return false
}

// memoLower is v's value lower-cased, remembered in m.
func (s *Session) memoLower(m *varMemo, v *sysvar.Var) string {
	if !s.fresh(m) {
		m.s = strings.ToLower(types.ToString(s.getSysVar(v, false)))
	}
	return m.s
}

// memoVal is v's value, remembered in m.
func (s *Session) memoVal(m *varMemo, v *sysvar.Var) types.Value {
	if !s.fresh(m) {
		m.v = s.getSysVar(v, false)
	}
	return m.v
}

// clientText converts text received from the client into UTF-8.
func (s *Session) clientText(text string) string {
	if s.charsetVar("character_set_client") == "latin1" {
		return types.Latin1Decode(text)
	}
	return text
}

// clientArgs converts string parameters of a prepared statement into UTF-8.
func (s *Session) clientArgs(args []types.Value) {
	if s.charsetVar("character_set_client") != "latin1" {
		return
	}
	for i := range args {
		if args[i].K == types.KindString {
			args[i].S = types.Latin1Decode(args[i].S)
		}
	}
}

// resultWriter wraps w so that string results reach the client in character_set_results. When
// character_set_results is NULL or binary, MySQL sends each column in its own character set: the
// values of latin1 columns (which Kiln holds as UTF-8) go out as latin1 bytes, as their column
// metadata says (Connector/J sets character_set_results = NULL and decodes by that metadata).
func (s *Session) resultWriter(w proto.ResultWriter) proto.ResultWriter {
	w = s.gtidTracker(w) // session_track_gtids (gtidread.go)
	switch s.charsetVar("character_set_results") {
	case "latin1", "", "binary":
		return &charsetWriter{ResultWriter: w, s: s}
	}
	return w
}

type charsetWriter struct {
	proto.ResultWriter
	s      *Session
	latin1 bool   // some column is converted
	conv   []bool // per column: a character string to convert
}

// latin1Collation reports whether the collation id is one of latin1's.
func latin1Collation(id uint16) bool {
	c, ok := types.CollationByID(id)
	return ok && c.Charset == "latin1"
}

func (c *charsetWriter) Columns(cols []proto.Column) error {
	rs := c.s.charsetVar("character_set_results")
	c.latin1 = false
	c.conv = c.conv[:0]
	if rs != "latin1" {
		// NULL or binary: only the latin1 columns, and their metadata stays.
		for _, col := range cols {
			conv := col.Charset != 63 && latin1Collation(col.Charset)
			c.conv = append(c.conv, conv)
			c.latin1 = c.latin1 || conv
		}
		return c.ResultWriter.Columns(cols)
	}
	c.latin1 = true
	out := make([]proto.Column, len(cols))
	for i, col := range cols {
		out[i] = col
		isText := col.Charset != 63
		c.conv = append(c.conv, isText)
		if isText {
			out[i].Charset = 8 // latin1_swedish_ci
			if col.Length > 0 {
				out[i].Length = col.Length / 4
			}
		}
	}
	return c.ResultWriter.Columns(out)
}

func (c *charsetWriter) Row(vals []types.Value) error {
	if !c.latin1 {
		return c.ResultWriter.Row(vals)
	}
	var out []types.Value // a copy: the executor may keep vals
	for i := range vals {
		if i < len(c.conv) && c.conv[i] && vals[i].K == types.KindString {
			if out == nil {
				out = append([]types.Value(nil), vals...)
			}
			out[i].S = types.Latin1Encode(vals[i].S)
		}
	}
	if out == nil {
		return c.ResultWriter.Row(vals)
	}
	return c.ResultWriter.Row(out)
}

// SetHandshakeCollation applies the character set a client asked for in its handshake, as MySQL
// does: character_set_client, _connection and _results become its charset. collation_connection
// follows it too, except that a utf8mb4 client keeps utf8mb4_0900_ai_ci: drivers send
// utf8mb4_general_ci (45) only because older servers lacked 0900, and comparisons of literals
// should not change with the driver.
func (s *Session) SetHandshakeCollation(id uint16) {
	c, ok := types.CollationByID(id)
	if !ok || c.Charset == "binary" {
		return
	}
	cs := c.Charset
	s.vars["character_set_client"] = types.NewString(cs)
	s.vars["character_set_results"] = types.NewString(cs)
	s.vars["character_set_connection"] = types.NewString(cs)
	if cs != "utf8mb4" {
		s.vars["collation_connection"] = types.NewString(c.Name)
	}
	s.varsGen++
}
