package dml

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"golang.org/x/text/encoding/charmap"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// LOAD DATA [LOCAL] INFILE's row loop, as MySQL 8 does it (sql/sql_load.cc). The facade checks
// that LOCAL is allowed and runs LoadData in the statement's scope; the file is read as a stream
// (fieldReader, a port of MySQL's READ_INFO for delimited rows) and each row is converted and
// written as INSERT writes it (Inserter), in the statement's transaction. See the facade's
// loaddata.go for the error-handling rules MySQL's LOCAL and IGNORE give.

// LocalFile is the client's side of LOAD DATA LOCAL (the facade's LocalFileOpener): it asks the
// client for the file it names and streams it; Close drains what the client has not sent.
type LocalFile interface {
	OpenLocalFile(name string) (io.ReadCloser, error)
}

// Format is a LOAD DATA statement's FIELDS and LINES clauses.
type Format struct {
	FieldTerm string
	Enclosed  int // byte, or NoChar
	Escape    int // byte, or NoChar
	LineTerm  string
	LineStart string
}

// NewFormat applies MySQL's defaults: fields terminated by a tab, not enclosed, escaped by a
// backslash; lines terminated by a newline, with no prefix. Without ESCAPED BY,
// NO_BACKSLASH_ESCAPES means no escape character.
func NewFormat(f *ast.FieldsClause, l *ast.LinesClause, noBackslashEscapes bool) (Format, error) {
	lf := Format{FieldTerm: "\t", Enclosed: NoChar, Escape: '\\', LineTerm: "\n"}
	if noBackslashEscapes {
		lf.Escape = NoChar
	}
	if f != nil {
		if f.DefinedNullBy != nil {
			return lf, sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of Kiln doesn't yet support 'DEFINED NULL BY'")
		}
		if f.Terminated != nil {
			lf.FieldTerm = *f.Terminated
		}
		if f.Enclosed != nil {
			if len(*f.Enclosed) > 1 {
				return lf, sqlerr.New(sqlerr.ErrWrongFieldTerminators, "Field separator argument is not what is expected; check the manual")
			}
			lf.Enclosed = NoChar
			if len(*f.Enclosed) == 1 {
				lf.Enclosed = int((*f.Enclosed)[0])
			}
		}
		if f.Escaped != nil {
			if len(*f.Escaped) > 1 {
				return lf, sqlerr.New(sqlerr.ErrWrongFieldTerminators, "Field separator argument is not what is expected; check the manual")
			}
			lf.Escape = NoChar
			if len(*f.Escaped) == 1 {
				lf.Escape = int((*f.Escaped)[0])
			}
		}
	}
	if l != nil {
		if l.Terminated != nil {
			lf.LineTerm = *l.Terminated
		}
		if l.Starting != nil {
			lf.LineStart = *l.Starting
		}
	}
	if lf.FieldTerm == "" && lf.Enclosed == NoChar {
		return lf, sqlerr.New(sqlerr.ErrNotSupportedYet,
			"This version of Kiln doesn't yet support 'LOAD DATA with fixed-width rows (FIELDS TERMINATED BY '' ENCLOSED BY '')'")
	}
	return lf, nil
}

const (
	eofChar = -1 // what get returns at the end of the input
	NoChar  = -2 // an absent terminator, enclosing or escape character: equals no input byte
)

// fieldReader splits a LOAD DATA input into fields and lines as MySQL's READ_INFO does (delimited
// rows), byte by byte with a push-back stack for multi-byte terminators. The input's character set
// matters only after splitting: the ASCII bytes of the terminators never occur inside a UTF-8
// sequence.
type fieldReader struct {
	r        *bufio.Reader
	stack    []int
	maxField int // longest field accepted, in bytes

	fieldTerm, lineTerm, lineStart []byte
	fieldTermChar, lineTermChar    int
	enclosedChar, escapeChar       int

	buf []byte
	err error // the first read error other than io.EOF

	foundEOL    bool // the current line's last field has been read
	eof         bool
	startOfLine bool // LINES STARTING BY must be found before the next field

	// The last field read: its bytes (valid until the next readField), whether it was enclosed,
	// and whether it held \N.
	field     []byte
	enclosed  bool
	foundNull bool
	// lineTruncated: nextLine skipped bytes (more fields than targets).
	lineTruncated bool
}

func newFieldReader(r io.Reader, f Format, maxField int) *fieldReader {
	fr := &fieldReader{r: bufio.NewReaderSize(r, 64<<10), maxField: maxField,
		fieldTerm: []byte(f.FieldTerm), lineTerm: []byte(f.LineTerm),
		enclosedChar: f.Enclosed, escapeChar: f.Escape,
		fieldTermChar: NoChar, lineTermChar: NoChar}
	if f.LineStart != "" {
		fr.lineStart = []byte(f.LineStart)
		fr.startOfLine = true
	}
	// Equal field and line terminators: the line terminator is not used.
	if f.FieldTerm == f.LineTerm {
		fr.lineTerm = nil
	}
	if len(fr.fieldTerm) > 0 {
		fr.fieldTermChar = int(fr.fieldTerm[0])
	}
	if len(fr.lineTerm) > 0 {
		fr.lineTermChar = int(fr.lineTerm[0])
	}
	return fr
}

func (fr *fieldReader) get() int {
	if n := len(fr.stack); n > 0 {
		c := fr.stack[n-1]
		fr.stack = fr.stack[:n-1]
		return c
	}
	b, err := fr.r.ReadByte()
	if err != nil {
		if err != io.EOF && fr.err == nil {
			fr.err = err
		}
		return eofChar
	}
	return int(b)
}

func (fr *fieldReader) push(c int) { fr.stack = append(fr.stack, c) }

// terminator reports whether the bytes after term's first (just read) follow; if not, it pushes
// back what it read.
func (fr *fieldReader) terminator(term []byte) bool {
	i := 1
	var c int
	for ; i < len(term); i++ {
		if c = fr.get(); c != int(term[i]) {
			break
		}
	}
	if i == len(term) {
		return true
	}
	fr.push(c)
	for i--; i > 0; i-- {
		fr.push(int(term[i]))
	}
	return false
}

func (fr *fieldReader) unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case '0':
		return 0
	case 'Z':
		return 032
	case 'N':
		fr.foundNull = true
	}
	return c
}

var errFieldTooLong = sqlerr.New(sqlerr.ErrNetPacketTooLarge, "Got a packet bigger than 'max_allowed_packet' bytes")

// readField reads the next field of the current line into fr.field. It returns false when the
// line has no more fields (or the input ended), or on an error.
func (fr *fieldReader) readField() (bool, error) {
	fr.foundNull = false
	if fr.foundEOL {
		return false, fr.err
	}
	if fr.startOfLine {
		fr.startOfLine = false
		if !fr.findStartOfFields() {
			return false, fr.err
		}
	}
	c := fr.get()
	if c == eofChar {
		fr.foundEOL, fr.eof = true, true
		return false, fr.err
	}
	to := fr.buf[:0]
	found := NoChar // the enclosing character, once the field started with it
	if c == fr.enclosedChar {
		found = c
		to = append(to, byte(c))
	} else {
		fr.push(c)
	}
	for {
		if len(to) > fr.maxField {
			fr.buf = to[:0]
			return false, errFieldTooLong
		}
		c = fr.get()
		if c == eofChar {
			break
		}
		if c == fr.escapeChar {
			if c = fr.get(); c == eofChar {
				to = append(to, byte(fr.escapeChar))
				break
			}
			// With the escape character equal to the enclosing one, it only doubles itself (as
			// quotes in SQL): ENCLOSED BY '"' ESCAPED BY '"' reads "fie""ld".
			if fr.escapeChar != fr.enclosedChar || c == fr.escapeChar {
				to = append(to, fr.unescape(byte(c)))
				continue
			}
			fr.push(c)
			c = fr.escapeChar
		}
		if c == fr.lineTermChar && found == NoChar && fr.terminator(fr.lineTerm) {
			fr.enclosed, fr.foundEOL = false, true
			fr.field, fr.buf = to, to
			return true, nil
		}
		if c == found {
			c = fr.get()
			if c == found { // doubled: one literal enclosing character
				to = append(to, byte(c))
				continue
			}
			// The field ends if a terminator follows the closing character.
			if c == eofChar || (c == fr.lineTermChar && fr.terminator(fr.lineTerm)) {
				fr.enclosed, fr.foundEOL = true, true
				fr.field, fr.buf = to[1:], to
				return true, nil
			}
			if c == fr.fieldTermChar && fr.terminator(fr.fieldTerm) {
				fr.enclosed = true
				fr.field, fr.buf = to[1:], to
				return true, nil
			}
			fr.push(c)
			c = found
		} else if c == fr.fieldTermChar && found == NoChar && fr.terminator(fr.fieldTerm) {
			fr.enclosed = false
			fr.field, fr.buf = to, to
			return true, nil
		}
		to = append(to, byte(c))
	}
	// End of input inside the field; an enclosed field that never closed keeps its opening
	// character, as in MySQL.
	fr.enclosed = false
	fr.foundEOL, fr.eof = true, true
	fr.field, fr.buf = to, to
	return true, fr.err
}

// nextLine skips to the start of the next line; it returns true at the end of the input.
// lineTruncated says whether it skipped anything (the line had more fields than targets).
func (fr *fieldReader) nextLine() bool {
	fr.lineTruncated = false
	fr.startOfLine = fr.lineStart != nil
	if fr.foundEOL || fr.eof {
		fr.foundEOL = false
		return fr.eof
	}
	if len(fr.lineTerm) == 0 {
		return false // no lines: fields follow each other
	}
	for {
		c := fr.get()
		if c == eofChar {
			fr.eof = true
			return true
		}
		if c == fr.escapeChar {
			fr.lineTruncated = true
			if fr.get() == eofChar {
				fr.eof = true
				return true
			}
			continue
		}
		if c == fr.lineTermChar && fr.terminator(fr.lineTerm) {
			return false
		}
		fr.lineTruncated = true
	}
}

// findStartOfFields skips input up to and including LINES STARTING BY; false at the end of input.
// A line without the prefix is thus skipped, and a prefix in the middle of a line starts the row.
func (fr *fieldReader) findStartOfFields() bool {
again:
	for {
		c := fr.get()
		if c == eofChar {
			fr.foundEOL, fr.eof = true, true
			return false
		}
		if c == int(fr.lineStart[0]) {
			break
		}
	}
	for i := 1; i < len(fr.lineStart); i++ {
		if c := fr.get(); c != int(fr.lineStart[i]) {
			fr.push(c)
			for j := i - 1; j > 0; j-- {
				fr.push(int(fr.lineStart[j]))
			}
			goto again
		}
	}
	return true
}

// isNull reports whether the last field read is SQL NULL: \N alone, or the unenclosed word NULL
// when ENCLOSED BY is set.
func (fr *fieldReader) isNull() bool {
	return (len(fr.field) == 1 && fr.foundNull) ||
		(!fr.enclosed && fr.enclosedChar != NoChar && string(fr.field) == "NULL")
}

// loadTarget is one entry of the column list: a column offset, or a user variable.
type loadTarget struct {
	col     int
	userVar string
}

// loadDecoder turns a field's bytes into a value of the file's character set; ok is false for
// bytes invalid in it.
type loadDecoder struct {
	charset string
	decode  func(b []byte) (v types.Value, ok bool)
}

func newLoadDecoder(cs *string, s Session) (loadDecoder, error) {
	name := "utf8mb4"
	if cs != nil {
		name = strings.ToLower(*cs)
	} else if db := strings.ToLower(types.ToString(s.SysVar(sysvar.Must("character_set_database"), false))); db != "" {
		name = db
	}
	if name == "utf8" {
		name = "utf8mb3"
	}
	d := loadDecoder{charset: name}
	switch name {
	case "utf8mb4", "utf8mb3":
		d.decode = func(b []byte) (types.Value, bool) { return types.NewString(string(b)), utf8.Valid(b) }
	case "ascii":
		d.decode = func(b []byte) (types.Value, bool) {
			for _, c := range b {
				if c >= 0x80 {
					return types.Null, false
				}
			}
			return types.NewString(string(b)), true
		}
	case "latin1":
		// MySQL's latin1 is Windows-1252, with its five unassigned bytes as the C1 controls:
		// every byte is a character.
		d.decode = func(b []byte) (types.Value, bool) {
			var sb strings.Builder
			sb.Grow(len(b) + len(b)/4)
			for _, c := range b {
				r := rune(c)
				if c >= 0x80 && c < 0xa0 {
					if r = charmap.Windows1252.DecodeByte(c); r == utf8.RuneError {
						r = rune(c)
					}
				}
				sb.WriteRune(r)
			}
			return types.NewString(sb.String()), true
		}
	case "binary":
		d.decode = func(b []byte) (types.Value, bool) { return types.NewBytes(string(b)), true }
	default:
		if _, ok := types.DefaultCollation(name); ok {
			return d, sqlerr.New(sqlerr.ErrNotSupportedYet, "This version of Kiln doesn't yet support 'LOAD DATA CHARACTER SET %s'", name)
		}
		return d, sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", name)
	}
	return d, nil
}

// validPrefix is what MySQL's 1300 error shows of a field with an invalid character: the bytes
// read before it (for an enclosed field, from the opening character on).
func validPrefix(b []byte, charset string) string {
	i := 0
	for i < len(b) {
		if charset == "ascii" {
			if b[i] >= 0x80 {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return string(b[:i])
}

// LoadData runs LOAD DATA in the statement's scope (the facade's); opener is nil without LOCAL.
func LoadData(env *expr.Env, s Session, x *ast.LoadDataStmt, opener LocalFile) (proto.OK, error) {
	tbl, err := LookupTable(s, x.Table.Schema.O, x.Table.Name.O)
	if err != nil {
		return proto.OK{}, err
	}
	format, err := NewFormat(x.FieldsInfo, x.LinesInfo, s.SQLModeHas("NO_BACKSLASH_ESCAPES"))
	if err != nil {
		return proto.OK{}, err
	}
	decode, err := newLoadDecoder(x.Charset, s)
	if err != nil {
		return proto.OK{}, err
	}

	targets, inList, err := loadTargets(tbl, x.ColumnsAndUserVars)
	if err != nil {
		return proto.OK{}, err
	}

	// The IGNORE and LOCAL modifiers: with LOCAL, duplicates are skipped unless REPLACE is given
	// (the parser turns LOCAL without a modifier into IGNORE), and with IGNORE semantics
	// data-interpretation errors are warnings even in strict mode.
	ignore := x.OnDuplicate == ast.OnDuplicateKeyHandlingIgnore
	replace := x.OnDuplicate == ast.OnDuplicateKeyHandlingReplace
	strict := s.Strict() && !ignore
	ins := &Inserter{Env: env, S: s, Tbl: tbl, Ignore: ignore, Replace: replace, Strict: strict}
	ins.Latest = exec.TxnOf(env).NewLatestReader(rowenc.TableSpan(tbl.ID))
	defer ins.Latest.Close()

	inSet := make([]bool, len(tbl.Columns))
	sets, err := loadSets(s, tbl, x.ColumnAssignments, targets, inSet)
	if err != nil {
		return proto.OK{}, err
	}

	noDefault := make([]bool, len(tbl.Columns))
	if len(x.ColumnsAndUserVars) > 0 {
		if err := missingDefaults(s, tbl, strict, inList, inSet, noDefault); err != nil {
			return proto.OK{}, err
		}
	}

	var rc io.ReadCloser
	if opener == nil {
		rc, err = s.OpenServerFile(x.Path) // inside secure_file_priv (outfile.go)
	} else {
		rc, err = opener.OpenLocalFile(x.Path)
	}
	if err != nil {
		return proto.OK{}, err
	}
	defer rc.Close() // on an error, reads the rest of the file: the client is still sending it

	maxField := int(types.ToIntLenient(s.SysVar(sysvar.Must("max_allowed_packet"), false)))
	fr := newFieldReader(rc, format, maxField)
	l := &loader{s: s, env: env, tbl: tbl, ins: ins, fr: fr, decode: decode, strict: strict,
		targets: targets, inList: inList, inSet: inSet, noDefault: noDefault, sets: sets}
	var skip uint64
	if x.IgnoreLines != nil {
		skip = *x.IgnoreLines
	}
	if err := l.run(skip); err != nil {
		return proto.OK{}, err
	}

	if ins.FirstAutoID != 0 {
		s.SetLastInsertID(ins.FirstAutoID)
	}
	copied := l.records - ins.Dups
	var deleted uint64
	if replace && ins.Affected > copied {
		deleted = ins.Affected - copied
	}
	// As MySQL: the OK packet carries no insert id (LAST_INSERT_ID() is set).
	return proto.OK{AffectedRows: ins.Affected,
		Info: fmt.Sprintf("Records: %d  Deleted: %d  Skipped: %d  Warnings: %d", l.records, deleted, ins.Dups, s.WarningCount())}, nil
}

// loadTargets is the column list (columns and user variables), or every visible column;
// inList marks the columns it names.
func loadTargets(tbl *catalog.Table, list []*ast.ColumnNameOrUserVar) ([]loadTarget, []bool, error) {
	var targets []loadTarget
	inList := make([]bool, len(tbl.Columns))
	if len(list) == 0 {
		for i, c := range tbl.Columns {
			if !c.Hidden {
				inList[i] = true
				targets = append(targets, loadTarget{col: i})
			}
		}
		return targets, inList, nil
	}
	for _, cv := range list {
		if cv.UserVar != nil {
			targets = append(targets, loadTarget{col: -1, userVar: strings.ToLower(cv.UserVar.Name)})
			continue
		}
		i := tbl.Col(cv.ColumnName.Name.O)
		if i < 0 || tbl.Columns[i].Hidden {
			return nil, nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", cv.ColumnName.Name.O)
		}
		inList[i] = true // named twice: the later field wins, as in MySQL
		targets = append(targets, loadTarget{col: i})
	}
	return targets, inList, nil
}

// loadSets compiles SET col = expr against the row being built, marking the columns it sets in
// inSet. User variables of the column list are strings while the statement runs: compile with
// that type, then put the old values back.
func loadSets(s Session, tbl *catalog.Table, list []*ast.Assignment, targets []loadTarget, inSet []bool) ([]Assignment, error) {
	if len(list) == 0 {
		return nil, nil
	}
	saved := map[string]*types.Value{}
	for _, t := range targets {
		if t.col < 0 {
			if _, done := saved[t.userVar]; !done {
				var old *types.Value
				if v, ok := s.Plan().LookupUserVar(t.userVar); ok {
					old = &v
				}
				saved[t.userVar] = old
				s.SetUserVar(t.userVar, types.NewString(""))
			}
		}
	}
	sets, err := compileLoadSets(s, tbl, list, inSet)
	for name, old := range saved {
		if old == nil {
			s.UnsetUserVar(name)
		} else {
			s.SetUserVar(name, *old)
		}
	}
	return sets, err
}

// missingDefaults finds the columns neither in the list nor SET without a default: an error in
// strict mode, otherwise one warning for the statement (as MySQL's
// check_that_all_fields_are_given_values), and noDefault marks them for their implicit default.
func missingDefaults(s Session, tbl *catalog.Table, strict bool, inList, inSet, noDefault []bool) error {
	for i, c := range tbl.Columns {
		if inList[i] || inSet[i] || c.Hidden || c.AutoInc || c.DefaultNow || c.HasDefault || !c.NotNull || c.GenExpr != "" {
			continue
		}
		if strict {
			return sqlerr.New(sqlerr.ErrNoDefaultForField, "Field '%s' doesn't have a default value", c.Name)
		}
		s.AddWarning("Warning", sqlerr.ErrNoDefaultForField, fmt.Sprintf("Field '%s' doesn't have a default value", c.Name))
		noDefault[i] = true
	}
	return nil
}

// compileLoadSets compiles the SET clause against the table's row, marking the columns it sets.
func compileLoadSets(s Session, tbl *catalog.Table, list []*ast.Assignment, inSet []bool) ([]Assignment, error) {
	var sets []Assignment
	err := s.Resolve(func(p *plan.Planner) (err error) {
		sets, err = compileLoadSetsWith(p.NewCompiler(plan.TableScope(tbl, tbl.Name)), s, tbl, list, inSet)
		return err
	})
	return sets, err
}

func compileLoadSetsWith(c *plan.Compiler, s Session, tbl *catalog.Table, list []*ast.Assignment, inSet []bool) ([]Assignment, error) {
	var sets []Assignment
	for _, a := range list {
		if a.Column.Table.O != "" && !strings.EqualFold(a.Column.Table.O, tbl.Name) {
			return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s.%s' in 'field list'", a.Column.Table.O, a.Column.Name.O)
		}
		i := tbl.Col(a.Column.Name.O)
		if i < 0 || tbl.Columns[i].Hidden {
			return nil, sqlerr.New(sqlerr.ErrBadField, "Unknown column '%s' in 'field list'", a.Column.Name.O)
		}
		col := tbl.Columns[i]
		var e expr.Expr
		if col.GenExpr != "" {
			if _, ok := a.Expr.(*ast.DefaultExpr); !ok {
				return nil, generatedValueError(tbl, col)
			}
			continue // computed when the row is written
		}
		if _, ok := a.Expr.(*ast.DefaultExpr); ok {
			e = DefaultOf(s, tbl, col)
		} else {
			var err error
			if e, err = c.Compile(a.Expr); err != nil {
				return nil, err
			}
		}
		inSet[i] = true
		sets = append(sets, Assignment{Col: i, E: e})
	}
	return sets, nil
}

// loader is the state of one LOAD DATA's row loop.
type loader struct {
	s       Session
	env     *expr.Env
	tbl     *catalog.Table
	ins     *Inserter
	fr      *fieldReader
	decode  loadDecoder
	strict  bool
	targets []loadTarget
	inList  []bool
	inSet   []bool
	// noDefault: NOT NULL columns without a default that the statement does not set (their
	// implicit default, warned about once).
	noDefault []bool
	sets      []Assignment

	records uint64 // rows read and written (or skipped as duplicates)
	row     []types.Value
}

// warnOrFail records a data-interpretation problem: an error in strict mode, else a warning.
func (l *loader) warnOrFail(code uint16, msg string) error {
	if l.strict {
		// sqlerr carries the codes' own SQLSTATEs (01000, 22004), as MySQL sends them.
		return sqlerr.New(code, "%s", msg)
	}
	l.s.AddWarning("Warning", code, msg)
	return nil
}

// run is MySQL's read_sep_field: one row per line, fields in the order of the targets.
func (l *loader) run(skip uint64) error {
	fr := l.fr
	// IGNORE n LINES skips lines by their terminator (an enclosed line break counts).
	if len(fr.lineTerm) > 0 {
		for ; skip > 0; skip-- {
			if fr.nextLine() {
				break
			}
		}
		if fr.err != nil {
			return fr.err
		}
		skip = 0
	}
	rowNum := 1
	for {
		if err := l.env.CheckKilled(); err != nil {
			return err
		}
		l.row = make([]types.Value, len(l.tbl.Columns))
		n := 0
		for n < len(l.targets) {
			ok, err := fr.readField()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if skip == 0 {
				if err := l.assign(l.targets[n], rowNum); err != nil {
					return err
				}
			}
			n++
		}
		if n == 0 {
			break // the input ended (a line, even empty, has a first field)
		}
		if skip > 0 { // only without a line terminator: IGNORE n LINES counts rows of fields
			skip--
			continue
		}
		if n < len(l.targets) {
			for _, t := range l.targets[n:] {
				if t.col < 0 {
					l.s.SetUserVar(t.userVar, types.Null)
					continue
				}
				if err := l.warnOrFail(sqlerr.ErrWarnTooFewRecords, fmt.Sprintf("Row %d doesn't contain data for all columns", rowNum)); err != nil {
					return err
				}
				l.row[t.col] = l.missingValue(l.tbl.Columns[t.col])
			}
		}
		if err := l.write(rowNum); err != nil {
			return err
		}
		eof := fr.nextLine()
		if fr.err != nil {
			return fr.err
		}
		if eof {
			break
		}
		if fr.lineTruncated {
			if err := l.warnOrFail(sqlerr.ErrWarnTooManyRecords, fmt.Sprintf("Row %d was truncated; it contained more data than there were input columns", rowNum)); err != nil {
				return err
			}
		}
		rowNum++
	}
	return fr.err
}

// assign stores the field just read into its target: a user variable gets the string, a column
// the value converted as INSERT converts a string (for the auto-increment column, 0 then asks for
// a new value, in FillAuto).
func (l *loader) assign(t loadTarget, rowNum int) error {
	fr := l.fr
	var v types.Value
	if !fr.isNull() {
		var ok bool
		if v, ok = l.decode.decode(fr.field); !ok {
			// Fatal, even under IGNORE, as in MySQL.
			return sqlerr.New(sqlerr.ErrInvalidCharacterString, "Invalid %s character string: '%s'",
				l.decode.charset, validPrefix(fr.buf, l.decode.charset))
		}
	}
	if t.col < 0 {
		l.s.SetUserVar(t.userVar, v)
		return nil
	}
	col := l.tbl.Columns[t.col]
	if v.IsNull() {
		cv, err := l.nullValue(col, rowNum)
		if err != nil {
			return err
		}
		l.row[t.col] = cv
		return nil
	}
	l.ins.Row = rowNum
	cv, err := l.ins.Convert(v, col)
	if err != nil {
		return err
	}
	l.row[t.col] = cv
	return nil
}

// nullValue is what \N gives a column: NULL, or for a NOT NULL column its implicit default with
// warning 1263 (the current time for a TIMESTAMP, a new value for AUTO_INCREMENT).
func (l *loader) nullValue(col *catalog.Column, rowNum int) (types.Value, error) {
	if !col.NotNull || col.AutoInc {
		return types.Null, nil
	}
	if col.Type.Tp == mysql.TypeTimestamp {
		return expr.TimeValue(l.env.Now(), max(col.Type.Frac, 0)), nil
	}
	err := l.warnOrFail(sqlerr.ErrWarnNullToNotNull,
		fmt.Sprintf("Column set to default value; NULL supplied to NOT NULL column '%s' at row %d", col.Name, rowNum))
	return col.Type.ImplicitDefault(), err
}

// missingValue is what a column whose field is missing from the line gets: MySQL resets it, which
// is NULL when the column's default is NULL and the type's zero value otherwise (not the column's
// default), the current time for a TIMESTAMP NOT NULL, a new value for AUTO_INCREMENT.
func (l *loader) missingValue(col *catalog.Column) types.Value {
	switch {
	case col.AutoInc:
		return types.Null
	case !col.NotNull && (!col.HasDefault || col.Default.IsNull()) && !col.DefaultNow:
		return types.Null
	case col.NotNull && col.Type.Tp == mysql.TypeTimestamp:
		return expr.TimeValue(l.env.Now(), max(col.Type.Frac, 0))
	}
	return col.Type.ImplicitDefault()
}

// write completes the row (defaults, SET, auto-increment) and writes it, resolving duplicates as
// the statement says.
func (l *loader) write(rowNum int) error {
	ins, tbl, row := l.ins, l.tbl, l.row
	ins.Row = rowNum
	for ci, col := range tbl.Columns {
		if l.inList[ci] || l.inSet[ci] {
			continue
		}
		if l.noDefault[ci] {
			row[ci] = col.Type.ImplicitDefault()
			continue
		}
		v, err := ins.defaultIn(col, row)
		if err != nil {
			return err
		}
		row[ci] = v
	}
	for _, a := range l.sets {
		v, err := a.E.Eval(l.env, row)
		if err != nil {
			return err
		}
		col := tbl.Columns[a.Col]
		if v.IsNull() {
			if row[a.Col], err = l.nullValue(col, rowNum); err != nil {
				return err
			}
			continue
		}
		if row[a.Col], err = ins.Convert(v, col); err != nil {
			return err
		}
	}
	if err := ins.FillAuto(row, nil); err != nil {
		return err
	}
	l.records++
	ins.NRows++
	ins.NewRow = row
	err := ins.Write(row)
	ins.NewRow = nil
	return err
}
