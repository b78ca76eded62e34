package plan

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"

	"github.com/kiln-db/kiln/internal/sql/exec"
	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/sqltext"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// JSON_TABLE (MySQL 8.0's table function). The facade rewrites JSON_TABLE(expr, 'path' COLUMNS
// (...)) AS alias into a derived table (SELECT expr AS `<marker>`) AS alias before parsing
// (sqltext.RewriteJSONTable); the planner recognises that shape (jsonTableSource) and plans a
// table-function level (exec.JSONTable) instead of a derived table: expr is bound over the
// columns of the FROM items before it (a lateral reference, as MySQL allows only for table
// functions), the columns get their declared types, and the level's rows are computed each time
// the level opens, so an inner JSON_TABLE level reads the current outer row's document (once per
// execution when the document reads no level: exec.JSONTable.Const).

// maxNestedPaths is MySQL's MAX_NESTED_PATH: a JSON_TABLE has at most 15 NESTED PATH clauses.
const maxNestedPaths = 16

// jsonTableSource reports whether a derived table is a rewritten JSON_TABLE, with its document
// expression and the marker alias that carries its specification.
func jsonTableSource(rs ast.ResultSetNode) (ast.ExprNode, string, bool) {
	sel, ok := rs.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.Where != nil {
		return nil, "", false
	}
	f := sel.Fields.Fields[0]
	if f.WildCard != nil || !sqltext.IsJSONTableMarker(f.AsName.O) {
		return nil, "", false
	}
	return f.Expr, f.AsName.O, true
}

// jsonTableLevel plans a JSON_TABLE FROM item as level li.
func (b *selectBuilder) jsonTableLevel(lv *exec.Level, li int, it fromItem, docNode ast.ExprNode, marker string) error {
	for _, other := range b.pl.Levels {
		if strings.EqualFold(other.Alias, it.alias) {
			return sqlerr.New(sqlerr.ErrNonUniqTable, "Not unique table/alias: '%s'", it.alias)
		}
	}
	spec, err := sqltext.DecodeJSONTableSpec(marker)
	if err != nil {
		return fmt.Errorf("json_table: decode its specification: %w", err)
	}
	if containsAgg(docNode) || HasSubquery(docNode) {
		return sqlerr.New(sqlerr.ErrWrongArguments, "Incorrect arguments to JSON_TABLE")
	}
	// The scope holds the earlier levels' columns only (this level's are added below): the
	// document may read those, and the enclosing query's row, nothing after it.
	cc := b.p.NewCompiler(b.sc)
	doc, err := cc.Compile(docNode)
	if err != nil {
		if e := sqlerr.As(err); e.Code == sqlerr.ErrBadField {
			// A table of the other side of a RIGHT JOIN comes after the table function once the
			// join is turned into a LEFT JOIN: MySQL refuses that lateral reference with 3668.
			for _, later := range b.items[li+1:] {
				if later.right {
					return sqlerr.New(sqlerr.ErrTFForbiddenJoinType, "INNER or LEFT JOIN must be used for LATERAL references made by '%s'", it.alias)
				}
			}
			return sqlerr.New(sqlerr.ErrBadField, "%s", strings.Replace(e.Message, "'field list'", "'a table function argument'", 1))
		}
		return err
	}
	jt := &exec.JSONTable{Alias: it.alias, Doc: doc, Const: cc.refs == 0 && !cc.correlated}
	jb := jtBuilder{b: b, jt: jt}
	if jt.Root, err = jb.node(spec.Path, spec.Cols); err != nil {
		return err
	}
	jt.Width = len(jb.cols)
	lv.Fn, lv.Width = jt, jt.Width
	for _, c := range jb.cols {
		b.sc.Cols = append(b.sc.Cols, ScopeCol{table: it.alias, Name: c.Name, T: c.T, level: li})
	}
	return nil
}

// jtBuilder builds a JSON_TABLE's node tree, numbering its columns in the order written.
type jtBuilder struct {
	b      *selectBuilder
	jt     *exec.JSONTable
	cols   []*exec.JTCol
	nested int
}

func (jb *jtBuilder) node(path string, cols []sqltext.JSONTableCol) (*exec.JTNode, error) {
	p, err := expr.JSONPathArg(types.NewString(path))
	if err != nil {
		return nil, err
	}
	// n.Cols never grows past its capacity: jb.cols points into it.
	n := &exec.JTNode{Path: p, First: len(jb.cols), Cols: make([]exec.JTCol, 0, len(cols))}
	for _, c := range cols {
		if c.Kind == sqltext.JTNested {
			jb.nested++
			if jb.nested >= maxNestedPaths {
				return nil, sqlerr.New(sqlerr.ErrJTMaxNestedPath, "More than supported %d NESTED PATHs were found in JSON_TABLE '%s'", maxNestedPaths, jb.jt.Alias)
			}
			child, err := jb.node(c.Path, c.Cols)
			if err != nil {
				return nil, err
			}
			n.Nested = append(n.Nested, child)
			continue
		}
		col, err := jb.column(c)
		if err != nil {
			return nil, err
		}
		for _, o := range jb.cols {
			if strings.EqualFold(o.Name, col.Name) {
				return nil, sqlerr.New(sqlerr.ErrDupFieldName, "Duplicate column name '%s'", col.Name)
			}
		}
		col.Idx = len(jb.cols)
		n.Cols = append(n.Cols, col)
		jb.cols = append(jb.cols, &n.Cols[len(n.Cols)-1])
	}
	n.End = len(jb.cols)
	return n, nil
}

// tUintOrdinality is a FOR ORDINALITY column's type: INT UNSIGNED.
var tUintOrdinality = types.ColType{Tp: mysql.TypeLong, Unsigned: true, Len: 10, Collation: "binary"}

func (jb *jtBuilder) column(c sqltext.JSONTableCol) (exec.JTCol, error) {
	col := exec.JTCol{Name: c.Name}
	if err := checkJTColumnName(c.Name); err != nil {
		return col, err
	}
	if c.Kind == sqltext.JTOrdinality {
		col.Kind, col.T = exec.JTOrdinality, tUintOrdinality
		return col, nil
	}
	col.Kind = exec.JTValue
	if c.Kind == sqltext.JTExists {
		col.Kind = exec.JTExists
	}
	t, err := jb.colType(c.Name, c.Type)
	if err != nil {
		return col, err
	}
	col.T = t
	if col.Path, err = expr.JSONPathArg(types.NewString(c.Path)); err != nil {
		return col, err
	}
	if col.OnEmpty, err = jtResponse(c.OnEmpty, &col); err != nil {
		return col, err
	}
	if col.OnError, err = jtResponse(c.OnError, &col); err != nil {
		return col, err
	}
	return col, nil
}

// checkJTColumnName refuses names MySQL refuses for a column (1166).
func checkJTColumnName(name string) error {
	if name == "" || strings.HasSuffix(name, " ") || len([]rune(name)) > 64 {
		return sqlerr.New(sqlerr.ErrWrongColumnName, "Incorrect column name '%s'", name)
	}
	return nil
}

// jtResponse compiles an ON EMPTY / ON ERROR clause. A DEFAULT value is JSON text: it must parse,
// be a scalar unless the column is JSON (1067 otherwise, as MySQL), and convert to the column's
// type; it is converted once here.
func jtResponse(on sqltext.JSONTableOn, col *exec.JTCol) (exec.JTResponse, error) {
	switch on.Kind {
	case 'e':
		return exec.JTResponse{Error: true}, nil
	case 'd':
		doc, err := types.ParseJSON(on.Default)
		invalid := sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", col.Name)
		if err != nil {
			return exec.JTResponse{}, invalid
		}
		if expr.IsJSONType(col.T) {
			return exec.JTResponse{Default: expr.JSONResult(doc)}, nil
		}
		switch doc.(type) {
		case nil:
			return exec.JTResponse{}, nil
		case []any, map[string]any:
			return exec.JTResponse{}, invalid
		}
		v, err := exec.JTScalar(doc, &col.T, col.Name)
		if err != nil {
			return exec.JTResponse{}, err
		}
		return exec.JTResponse{Default: v}, nil
	}
	return exec.JTResponse{}, nil
}

// colType reads a JSON_TABLE column's type as written, through the parser's column definition
// (a synthetic CREATE TABLE), and completes it as CREATE TABLE does: string columns default to
// utf8mb4 (MySQL's JSON_TABLE character set) with its default collation.
func (jb *jtBuilder) colType(name, text string) (types.ColType, error) {
	var t types.ColType
	stmts, err := jb.b.p.Ctx.ParseSQL("CREATE TABLE t (c " + text + ")")
	var ct *ast.CreateTableStmt
	if err == nil && len(stmts) == 1 {
		ct, _ = stmts[0].(*ast.CreateTableStmt)
	}
	if ct == nil || len(ct.Cols) != 1 || len(ct.Cols[0].Options) > 0 || len(ct.Constraints) > 0 {
		return t, sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line 1", text)
	}
	return jtColType(name, ct.Cols[0].Tp)
}

// jtColType converts a parsed column type: the rules of sql/ddl's column types for what a
// JSON_TABLE column may be (the planner cannot import sql/ddl, which sits above it).
func jtColType(name string, ft *ptypes.FieldType) (types.ColType, error) {
	t := types.ColType{Tp: ft.GetType(), Len: ft.GetFlen(), Frac: ft.GetDecimal(), Unsigned: mysql.HasUnsignedFlag(ft.GetFlag()), Collation: "binary"}
	switch t.Tp {
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeTinyBlob, mysql.TypeBlob,
		mysql.TypeMediumBlob, mysql.TypeLongBlob, mysql.TypeEnum, mysql.TypeSet:
		cs, coll := ft.GetCharset(), ft.GetCollate()
		if cs == "binary" || coll == "binary" {
			if t.Tp == mysql.TypeEnum || t.Tp == mysql.TypeSet {
				cs, coll = "", ""
			} else {
				t.Charset, t.Collation = "binary", "binary"
				break
			}
		}
		if cs == "" {
			cs = "utf8mb4"
		}
		if cs == "utf8" {
			cs = "utf8mb3"
		}
		if coll == "" {
			dc, ok := types.DefaultCollation(cs)
			if !ok {
				return t, sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", cs)
			}
			coll = dc.Name
		}
		c, ok := types.LookupCollation(coll)
		if !ok {
			return t, sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", coll)
		}
		t.Charset, t.Collation = c.Charset, c.Name
		switch t.Tp {
		case mysql.TypeVarString:
			t.Tp = mysql.TypeVarchar
		case mysql.TypeString:
			if t.Len < 0 {
				t.Len = 1
			}
		case mysql.TypeEnum, mysql.TypeSet:
			t.Len, t.Frac = -1, -1
			for _, e := range ft.GetElems() {
				t.Elems = append(t.Elems, strings.TrimRight(e, " "))
			}
		}
	case mysql.TypeNewDecimal:
		if t.Len < 0 {
			t.Len = 10
		}
		if t.Frac < 0 {
			t.Frac = 0
		}
		if t.Len > 65 {
			return t, sqlerr.New(sqlerr.ErrTooBigPrecision, "Too-big precision %d specified for '%s'. Maximum is 65.", t.Len, name)
		}
		if t.Frac > 30 {
			return t, sqlerr.New(sqlerr.ErrTooBigScale, "Too big scale %d specified for column '%s'. Maximum is 30.", t.Frac, name)
		}
		if t.Frac > t.Len {
			return t, sqlerr.New(sqlerr.ErrMBiggerThanD, "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '%s').", name)
		}
	case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		if t.Frac < 0 {
			t.Frac = 0
		}
		if t.Frac > 6 {
			return t, sqlerr.New(sqlerr.ErrTooBigPrecision, "Too-big precision %d specified for '%s'. Maximum is 6.", t.Frac, name)
		}
	case mysql.TypeJSON:
		t.Len, t.Frac = -1, -1
	case mysql.TypeBit:
		if t.Len < 0 {
			t.Len = 1
		}
		t.Frac = -1
	case mysql.TypeGeometry, mysql.TypeTiDBVectorFloat32:
		return t, sqlerr.New(sqlerr.ErrNotSupportedYet, "column type %s is not supported yet", ptypes.TypeToStr(t.Tp, ""))
	}
	return t, nil
}

// RestoreSQL is the parser's restore of n (a view's SELECT) with each JSON_TABLE written back as
// JSON_TABLE(expr, 'path' COLUMNS(...)) alias, so a stored view's text is SQL MySQL reads (SHOW
// CREATE VIEW) and parses back through the same rewrite.
func RestoreSQL(n ast.Node) (string, error) {
	f := &jtFinder{}
	n.Accept(f)
	if len(f.found) == 0 {
		return restoreNode(n)
	}
	// Each JSON_TABLE's derived table is swapped for a table name standing for its text while n
	// is restored, then put back.
	texts := make([]string, len(f.found))
	saved := make([]ast.ResultSetNode, len(f.found))
	defer func() {
		for i, ts := range f.found {
			if saved[i] != nil {
				ts.Source = saved[i]
			}
		}
	}()
	for i, ts := range f.found {
		doc, marker, _ := jsonTableSource(ts.Source)
		spec, err := sqltext.DecodeJSONTableSpec(marker)
		if err != nil {
			return "", fmt.Errorf("json_table: decode its specification: %w", err)
		}
		docText, err := restoreNode(doc)
		if err != nil {
			return "", err
		}
		texts[i] = "JSON_TABLE(" + docText + ", " + spec.SQL() + ")"
		saved[i] = ts.Source
		ts.Source = &ast.TableName{Name: ast.NewCIStr(jtPlaceholder(i))}
	}
	out, err := restoreNode(n)
	if err != nil {
		return "", err
	}
	for i, t := range texts {
		out = strings.Replace(out, "`"+jtPlaceholder(i)+"`", t, 1)
	}
	return out, nil
}

func jtPlaceholder(i int) string { return fmt.Sprintf("%stext_%d", sqltext.JSONTableMarker, i) }

func restoreNode(n ast.Node) (string, error) {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// jtFinder collects the FROM items that are rewritten JSON_TABLEs.
type jtFinder struct{ found []*ast.TableSource }

func (v *jtFinder) Enter(n ast.Node) (ast.Node, bool) {
	if ts, ok := n.(*ast.TableSource); ok {
		if _, _, ok := jsonTableSource(ts.Source); ok {
			v.found = append(v.found, ts)
			return n, true
		}
	}
	return n, false
}
func (v *jtFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
