package sql

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/pingcap/tidb/pkg/parser/ast"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/dml"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Server-side files: SELECT ... INTO OUTFILE / INTO DUMPFILE and LOAD DATA INFILE (without LOCAL).
//
// As in MySQL, secure_file_priv decides: NULL (the default, Config.SecureFilePriv empty) refuses
// them with 1290; a directory allows files inside it only. A relative name is taken inside that
// directory (MySQL takes it relative to the data directory, which secure_file_priv would refuse
// unless both are the same). OUTFILE and DUMPFILE never overwrite a file (1086); a statement that
// fails removes the file it was writing, as MySQL does. Files are written with MySQL's export
// format (the FIELDS and LINES clauses, as LOAD DATA reads them back).

func errSecureFilePriv() error {
	return sqlerr.New(sqlerr.ErrOptionPreventsStatement,
		"The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")
}

// secureFile resolves a file name of a statement against secure_file_priv.
func (db *DB) secureFile(name string) (string, error) {
	dir := db.cfg.SecureFilePriv
	if dir == "" {
		return "", errSecureFilePriv()
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", errSecureFilePriv()
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	// The directory the file goes in, with its symbolic links resolved, must be the secure one or
	// inside it (a link must not lead out).
	parent := filepath.Dir(p)
	if real, err := filepath.EvalSymlinks(parent); err == nil {
		parent = real
	}
	if parent != dir && !strings.HasPrefix(parent, dir+string(filepath.Separator)) {
		return "", errSecureFilePriv()
	}
	return filepath.Join(parent, filepath.Base(p)), nil
}

// secureFilePrivValue is @@secure_file_priv: NULL or the directory, with a trailing separator as
// MySQL shows it.
func secureFilePrivValue(cfg Config) types.Value {
	if cfg.SecureFilePriv == "" {
		return types.Null
	}
	dir, err := filepath.Abs(cfg.SecureFilePriv)
	if err != nil {
		dir = cfg.SecureFilePriv
	}
	return types.NewString(strings.TrimSuffix(dir, string(filepath.Separator)) + string(filepath.Separator))
}

// selectInto returns a query's INTO OUTFILE / DUMPFILE clause: it may end the statement or any
// arm of a UNION (MySQL 8 takes it at the end only; older versions in the last arm).
func selectInto(n ast.ResultSetNode) *ast.SelectIntoOption {
	switch x := n.(type) {
	case *ast.SelectStmt:
		return x.SelectIntoOpt
	case *ast.SetOprStmt:
		if x.SelectList == nil {
			return nil
		}
		for _, sel := range x.SelectList.Selects {
			if s, ok := sel.(*ast.SelectStmt); ok && s.SelectIntoOpt != nil {
				return s.SelectIntoOpt
			}
		}
	}
	return nil
}

// dumpfileRE finds INTO DUMPFILE, which the parser does not know: the statement is parsed again
// with INTO OUTFILE and marked as DUMPFILE (markDumpfile).
var dumpfileRE = regexp.MustCompile(`(?i)\bINTO\s+DUMPFILE\b`)

func dumpfileFallback(text string) (string, bool) {
	loc := dumpfileRE.FindStringIndex(text)
	if loc == nil {
		return "", false
	}
	return text[:loc[0]] + "INTO OUTFILE" + text[loc[1]:], true
}

func markDumpfile(stmts []ast.StmtNode) {
	for _, st := range stmts {
		if rs, ok := st.(ast.ResultSetNode); ok {
			if into := selectInto(rs); into != nil {
				into.Tp = ast.SelectIntoDumpfile
			}
		}
	}
}

// selectIntoFile runs a query whose rows go to a file on the server; the client gets an OK with
// the number of rows written.
func (s *Session) selectIntoFile(env *expr.Env, n ast.ResultSetNode, into *ast.SelectIntoOption, w proto.ResultWriter, more bool) error {
	path, err := s.db.secureFile(into.FileName)
	if err != nil {
		return err
	}
	ew := &exportWriter{dump: into.Tp == ast.SelectIntoDumpfile}
	if !ew.dump {
		if ew.format, err = dml.NewFormat(into.FieldsInfo, into.LinesInfo, s.sqlModeHas("NO_BACKSLASH_ESCAPES")); err != nil {
			return err
		}
		ew.optEnclosed = into.FieldsInfo != nil && into.FieldsInfo.OptEnclosed
	}
	pl, err := s.planQuery(n)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return sqlerr.New(sqlerr.ErrFileExists, "File '%s' already exists", into.FileName)
		}
		return sqlerr.New(sqlerr.ErrCantCreateFile, "Can't create/write to file '%s' (OS errno %d - %s)", into.FileName, errnoOf(err), err)
	}
	ew.bw = bufio.NewWriterSize(f, 64<<10)
	err = s.stmtScope(env, func() error { return s.streamPlan(env, pl, ew, false) })
	if err == nil {
		err = ew.bw.Flush()
		if err == nil {
			err = f.Close()
		} else {
			f.Close()
		}
		if err != nil {
			err = sqlerr.New(sqlerr.ErrErrorOnWrite, "Error writing file '%s' (OS errno %d - %s)", into.FileName, errnoOf(err), err)
		}
	} else {
		f.Close()
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	s.rowCount = ew.rows
	return w.OK(proto.OK{AffectedRows: uint64(ew.rows), Warnings: s.warningCount()}, more)
}

func errnoOf(err error) int {
	var no syscall.Errno
	if errors.As(err, &no) {
		return int(no)
	}
	return 0
}

// exportWriter is the ResultWriter of SELECT ... INTO OUTFILE / DUMPFILE: MySQL's select_export
// and select_dump (sql/query_result.cc).
type exportWriter struct {
	bw          *bufio.Writer
	format      dml.Format
	optEnclosed bool
	dump        bool
	cols        []proto.Column
	rows        int64
	scratch     []byte
}

func (e *exportWriter) Columns(cols []proto.Column) error {
	e.cols = cols
	return nil
}

func (e *exportWriter) EndRows(uint16, bool) error { return nil }
func (e *exportWriter) OK(proto.OK, bool) error    { return nil }

func (e *exportWriter) Row(vals []types.Value) error {
	e.rows++
	if e.dump {
		if e.rows > 1 {
			return sqlerr.New(sqlerr.ErrTooManyRows, "Result consisted of more than one row")
		}
		for i := range vals {
			if !vals[i].IsNull() {
				e.bw.Write(e.text(&vals[i], i))
			}
		}
		return nil
	}
	f := &e.format
	e.bw.WriteString(f.LineStart)
	for i := range vals {
		if i > 0 {
			e.bw.WriteString(f.FieldTerm)
		}
		v := &vals[i]
		if v.IsNull() {
			if f.Escape != dml.NoChar {
				e.bw.WriteByte(byte(f.Escape))
				e.bw.WriteByte('N')
			} else {
				e.bw.WriteString("NULL")
			}
			continue
		}
		enclose := f.Enclosed != dml.NoChar && (!e.optEnclosed || !numericColumn(e.cols[i].Type))
		if enclose {
			e.bw.WriteByte(byte(f.Enclosed))
		}
		e.writeEscaped(e.text(v, i), f.Enclosed != dml.NoChar)
		if enclose {
			e.bw.WriteByte(byte(f.Enclosed))
		}
	}
	_, err := e.bw.WriteString(f.LineTerm)
	return err
}

func (e *exportWriter) text(v *types.Value, i int) []byte {
	switch v.K {
	case types.KindString, types.KindBytes:
		return []byte(v.S)
	}
	e.scratch = proto.AppendColumnText(e.scratch[:0], v, &e.cols[i])
	return e.scratch
}

// writeEscaped writes a field with the escape character before the escape character itself, the
// enclosing character, the first characters of the terminators when fields are not enclosed, and
// NUL (written as escape + '0'), as MySQL documents for INTO OUTFILE.
func (e *exportWriter) writeEscaped(b []byte, enclosed bool) {
	f := &e.format
	if f.Escape == dml.NoChar {
		e.bw.Write(b)
		return
	}
	esc := byte(f.Escape)
	for _, c := range b {
		switch {
		case c == 0:
			e.bw.WriteByte(esc)
			e.bw.WriteByte('0')
			continue
		case c == esc,
			f.Enclosed != dml.NoChar && c == byte(f.Enclosed),
			!enclosed && f.FieldTerm != "" && c == f.FieldTerm[0],
			!enclosed && f.LineTerm != "" && c == f.LineTerm[0]:
			e.bw.WriteByte(esc)
		}
		e.bw.WriteByte(c)
	}
}

func numericColumn(t byte) bool {
	switch t {
	case pmysql.TypeTiny, pmysql.TypeShort, pmysql.TypeInt24, pmysql.TypeLong, pmysql.TypeLonglong,
		pmysql.TypeFloat, pmysql.TypeDouble, pmysql.TypeNewDecimal, pmysql.TypeYear, pmysql.TypeBit:
		return true
	}
	return false
}

// openServerFile opens a LOAD DATA INFILE file (without LOCAL) inside secure_file_priv.
func (s *Session) openServerFile(name string) (io.ReadCloser, error) {
	path, err := s.db.secureFile(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, sqlerr.New(sqlerr.ErrFileNotFound, "File '%s' not found (OS errno %d - %s)", name, errnoOf(err), err)
	}
	return f, nil
}
