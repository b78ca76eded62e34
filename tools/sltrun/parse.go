package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Kind is the type of a sqllogictest record.
type Kind int

const (
	KindStatement     Kind = iota // statement ok | statement error
	KindQuery                     // query <types> [sort] [label]
	KindHashThreshold             // hash-threshold N
	KindHalt                      // halt
	KindInvalid                   // unknown or malformed record: counted as a failure
)

func (k Kind) String() string {
	switch k {
	case KindStatement:
		return "statement"
	case KindQuery:
		return "query"
	case KindHashThreshold:
		return "hash-threshold"
	case KindHalt:
		return "halt"
	}
	return "invalid"
}

// Condition is one skipif/onlyif line in front of a record.
type Condition struct {
	OnlyIf bool   // onlyif (true) or skipif (false)
	Engine string // e.g. "mysql", "sqlite", "postgresql"
}

// Record is one parsed record of a .test file. Line is the 1-based line
// number of the record's command line (after its conditions), as
// sqllogictest.c reports it.
type Record struct {
	Line       int
	Kind       Kind
	Conditions []Condition

	// statement
	ExpectError bool

	// statement and query
	SQL string

	// query
	Types     string // one of T, I, R per column
	SortMode  string // nosort, rowsort, valuesort
	Label     string
	HasResult bool     // a "----" line was present
	Expected  []string // expected lines after "----"

	// hash-threshold
	Threshold int

	// invalid records: why
	Err string
}

// Skipped reports whether the record's conditions exclude it for engine
// (compared case-insensitively, as sqllogictest.c does).
func (r *Record) Skipped(engine string) bool {
	for _, c := range r.Conditions {
		match := strings.EqualFold(c.Engine, engine)
		if c.OnlyIf && !match {
			return true
		}
		if !c.OnlyIf && match {
			return true
		}
	}
	return false
}

// IsTest reports whether the record runs SQL and counts in the statistics.
func (r *Record) IsTest() bool {
	return r.Kind == KindStatement || r.Kind == KindQuery || r.Kind == KindInvalid
}

var hashLineRE = regexp.MustCompile(`^(\d+) values hashing to ([0-9a-fA-F]{32})$`)

// ExpectedHash returns the value count and md5 of an expected result written
// as "N values hashing to H"; ok is false if the expected result is a list of
// values.
func (r *Record) ExpectedHash() (n int, hash string, ok bool) {
	if len(r.Expected) != 1 {
		return 0, "", false
	}
	m := hashLineRE.FindStringSubmatch(r.Expected[0])
	if m == nil {
		return 0, "", false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return n, strings.ToLower(m[2]), true
}

// script is the line cursor over a file, following sqllogictest.c: lines
// starting with '#' are comments and vanish wherever they are (even inside a
// record), a trailing \r is dropped, and a line of only white space is blank.
type script struct {
	lines []string
	nums  []int // 1-based line number of each entry of lines
	pos   int
}

func newScript(r io.Reader) (*script, error) {
	s := &script{}
	br := bufio.NewReaderSize(r, 1<<16)
	n := 0
	for {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if err == io.EOF {
				break
			}
			return nil, err
		}
		n++
		line = strings.TrimSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			line = ""
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		s.lines = append(s.lines, line)
		s.nums = append(s.nums, n)
		if err == io.EOF {
			break
		}
	}
	return s, nil
}

func (s *script) eof() bool     { return s.pos >= len(s.lines) }
func (s *script) cur() string   { return s.lines[s.pos] }
func (s *script) curLine() int  { return s.nums[s.pos] }
func (s *script) atBlank() bool { return s.eof() || s.lines[s.pos] == "" }

func (s *script) skipBlank() {
	for !s.eof() && s.lines[s.pos] == "" {
		s.pos++
	}
}

func (s *script) skipToBlank() {
	for !s.atBlank() {
		s.pos++
	}
}

func tokens(line string) []string { return strings.Fields(line) }

func tok(t []string, i int) string {
	if i < len(t) {
		return t[i]
	}
	return ""
}

// Parse reads a whole .test file into records. It never fails on malformed
// records: those become KindInvalid records so that the runner counts them and
// goes on with the next record.
func Parse(r io.Reader) ([]Record, error) {
	s, err := newScript(r)
	if err != nil {
		return nil, err
	}
	var recs []Record
	for {
		s.skipBlank()
		if s.eof() {
			return recs, nil
		}
		var conds []Condition
		t := tokens(s.cur())
		for (t[0] == "skipif" || t[0] == "onlyif") && !s.atBlank() {
			conds = append(conds, Condition{OnlyIf: t[0] == "onlyif", Engine: tok(t, 1)})
			s.pos++
			if s.atBlank() {
				break
			}
			t = tokens(s.cur())
		}
		if s.atBlank() {
			// Conditions with nothing after them: nothing to run.
			continue
		}
		rec := Record{Line: s.curLine(), Conditions: conds}
		s.pos++
		switch t[0] {
		case "statement":
			rec.Kind = KindStatement
			switch tok(t, 1) {
			case "ok":
			case "error":
				rec.ExpectError = true
			default:
				rec.Kind = KindInvalid
				rec.Err = fmt.Sprintf("statement argument should be 'ok' or 'error', got %q", tok(t, 1))
			}
			var sql []string
			for !s.atBlank() {
				sql = append(sql, s.cur())
				s.pos++
			}
			rec.SQL = strings.Join(sql, "\n")
		case "query":
			rec.Kind = KindQuery
			rec.Types = tok(t, 1)
			rec.SortMode = tok(t, 2)
			rec.Label = tok(t, 3)
			if rec.SortMode == "" {
				rec.SortMode = "nosort"
			}
			if rec.Types == "" {
				rec.Kind, rec.Err = KindInvalid, "missing type string"
			} else if strings.Trim(rec.Types, "TIR") != "" {
				rec.Kind, rec.Err = KindInvalid, fmt.Sprintf("unknown type character in type string %q", rec.Types)
			} else if rec.SortMode != "nosort" && rec.SortMode != "rowsort" && rec.SortMode != "valuesort" {
				rec.Kind, rec.Err = KindInvalid, fmt.Sprintf("unknown sort method %q", rec.SortMode)
			}
			var sql []string
			for !s.atBlank() && s.cur() != "----" {
				sql = append(sql, s.cur())
				s.pos++
			}
			rec.SQL = strings.Join(sql, "\n")
			if !s.atBlank() && s.cur() == "----" {
				rec.HasResult = true
				s.pos++
				for !s.atBlank() {
					rec.Expected = append(rec.Expected, s.cur())
					s.pos++
				}
			}
		case "hash-threshold":
			rec.Kind = KindHashThreshold
			n, err := strconv.Atoi(tok(t, 1))
			if err != nil || n < 0 {
				rec.Kind, rec.Err = KindInvalid, fmt.Sprintf("bad hash-threshold %q", tok(t, 1))
			}
			rec.Threshold = n
			s.skipToBlank()
		case "halt":
			rec.Kind = KindHalt
			s.skipToBlank()
		default:
			rec.Kind = KindInvalid
			rec.Err = fmt.Sprintf("unknown record type %q", t[0])
			s.skipToBlank()
		}
		recs = append(recs, rec)
	}
}

// ParseBytes is Parse over an in-memory file.
func ParseBytes(b []byte) ([]Record, error) { return Parse(bytes.NewReader(b)) }
