package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// columnCollation resolves a column's character set and collation clauses against the table's
// defaults: no charset means the table's, no collation the charset's default (the table's own
// collation when the charset is the table's).
func columnCollation(cs, coll, tblCharset, tblColl string) (*types.Collation, error) {
	if cs == "" {
		cs = tblCharset
	}
	if cs == "utf8" {
		cs = "utf8mb3"
	}
	if coll == "" {
		if cs == tblCharset && tblColl != "" {
			coll = tblColl
		} else if c, ok := types.DefaultCollation(cs); ok {
			coll = c.Name
		} else {
			return nil, sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", cs)
		}
	}
	c, ok := types.LookupCollation(coll)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", coll)
	}
	return c, nil
}

// colType converts a parser column type.
func colType(name string, ft *ptypes.FieldType, tblCharset, tblColl string) (types.ColType, error) {
	t := types.ColType{Tp: ft.GetType(), Len: ft.GetFlen(), Frac: ft.GetDecimal(), Unsigned: mysql.HasUnsignedFlag(ft.GetFlag())}
	switch t.Tp {
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if err := stringType(&t, ft, tblCharset, tblColl); err != nil {
			return t, err
		}
	case mysql.TypeNewDecimal:
		if t.Len < 0 {
			t.Len = 10
		}
		if t.Frac < 0 {
			t.Frac = 0
		}
		if t.Len > 65 {
			return t, sqlerr.New(sqlerr.ErrTooBigPrecision, "Too-big precision %d specified. Maximum is 65.", t.Len)
		}
		if t.Frac > 30 {
			return t, sqlerr.New(sqlerr.ErrTooBigScale, "Too big scale %d specified. Maximum is 30.", t.Frac)
		}
		if t.Frac > t.Len {
			return t, sqlerr.New(sqlerr.ErrMBiggerThanD, "For float(M,D), double(M,D) or decimal(M,D), M must be >= D")
		}
		t.Collation = "binary"
	case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		if t.Frac < 0 {
			t.Frac = 0
		}
		if t.Frac > 6 {
			return t, sqlerr.New(sqlerr.ErrTooBigPrecision, "Too-big precision %d specified. Maximum is 6.", t.Frac)
		}
		t.Collation = "binary"
	case mysql.TypeEnum, mysql.TypeSet:
		if err := enumType(&t, name, ft, tblCharset, tblColl); err != nil {
			return t, err
		}
	case mysql.TypeJSON:
		t.Len, t.Frac, t.Collation = -1, -1, "binary"
	case mysql.TypeBit:
		if t.Len < 0 {
			t.Len = 1
		}
		if t.Len == 0 || t.Len > 64 {
			return t, sqlerr.New(sqlerr.ErrTooBigDisplayWidth, "Display width out of range for column '%s' (max = 64)", name)
		}
		t.Frac, t.Collation = -1, "binary"
	case mysql.TypeGeometry, mysql.TypeTiDBVectorFloat32:
		return t, sqlerr.New(sqlerr.ErrNotSupportedYet, "column type %s is not supported yet", ptypes.TypeToStr(t.Tp, ""))
	default:
		t.Collation = "binary"
	}
	return t, nil
}

// stringType completes t, a CHAR, VARCHAR, BINARY, VARBINARY, TEXT or BLOB type: its charset and
// collation (CHAR(n) BINARY is the charset's _bin collation), VARCHAR's required length, the
// longest CHAR/VARCHAR.
func stringType(t *types.ColType, ft *ptypes.FieldType, tblCharset, tblColl string) error {
	cs, coll := ft.GetCharset(), ft.GetCollate()
	if mysql.HasBinaryFlag(ft.GetFlag()) && cs == "" && (t.Tp == mysql.TypeString || t.Tp == mysql.TypeVarchar || t.Tp == mysql.TypeVarString) && coll == "" {
		// CHAR(n) BINARY means the charset's _bin collation, not a binary string.
		cs = tblCharset
		if _, ok := types.DefaultCollation(cs); ok {
			coll = cs + "_bin"
		}
	}
	if cs == "binary" || coll == "binary" {
		t.Charset, t.Collation = "binary", "binary"
		return nil
	}
	c, err := columnCollation(cs, coll, tblCharset, tblColl)
	if err != nil {
		return err
	}
	t.Charset, t.Collation = c.Charset, c.Name
	if t.Tp == mysql.TypeVarString {
		t.Tp = mysql.TypeVarchar
	}
	if (t.Tp == mysql.TypeString) && t.Len < 0 {
		t.Len = 1
	}
	if t.Tp == mysql.TypeVarchar && t.Len < 0 {
		return sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax; VARCHAR needs a length")
	}
	if t.Len > 65535 && (t.Tp == mysql.TypeVarchar || t.Tp == mysql.TypeString) {
		return sqlerr.New(sqlerr.ErrTooBigFieldLength, "Column length too big (max = 16383); use BLOB or TEXT instead")
	}
	return nil
}

// enumType completes t, an ENUM or SET type: its charset and collation (its members are
// character strings) and its members, refusing duplicates under the collation (and a SET member
// with a comma, or more than 64 of them).
func enumType(t *types.ColType, name string, ft *ptypes.FieldType, tblCharset, tblColl string) error {
	cs, coll := ft.GetCharset(), ft.GetCollate()
	if cs == "binary" && coll == "" {
		cs = "" // ENUM/SET members are character strings: the table's charset
	}
	c, err := columnCollation(cs, coll, tblCharset, tblColl)
	if err != nil {
		return err
	}
	t.Charset, t.Collation, t.Len, t.Frac = c.Charset, c.Name, -1, -1
	what := "ENUM"
	if t.Tp == mysql.TypeSet {
		what = "SET"
		if len(ft.GetElems()) > 64 {
			return sqlerr.New(sqlerr.ErrTooBigSet, "Too many strings for column %s and SET", name)
		}
	}
	for _, e := range ft.GetElems() {
		e = strings.TrimRight(e, " ")
		if t.Tp == mysql.TypeSet && strings.Contains(e, ",") {
			return sqlerr.New(sqlerr.ErrIllegalValueForType, "Illegal %s '%s' value found during parsing", what, e)
		}
		for _, o := range t.Elems {
			if c.Compare(o, e) == 0 {
				return sqlerr.New(sqlerr.ErrDuplicatedValueInType, "Column '%s' has duplicated value '%s' in %s", name, e, what)
			}
		}
		t.Elems = append(t.Elems, e)
	}
	return nil
}

// buildColumn turns a column definition into a catalog column; it returns inline key constraints.
func (d *Stmt) buildColumn(tbl *catalog.Table, cd *ast.ColumnDef) (*catalog.Column, []*ast.Constraint, error) {
	name := cd.Name.Name.O
	if err := checkIdent(name, sqlerr.ErrWrongColumnName, "column"); err != nil {
		return nil, nil, err
	}
	ct, err := colType(name, cd.Tp, tbl.Charset, tbl.Collation)
	if err != nil {
		return nil, nil, err
	}
	col := &catalog.Column{ID: tbl.NextColID, Name: name, Type: ct}
	tbl.NextColID++
	var keys []*ast.Constraint
	var defNode ast.ExprNode
	explicitNull := false
	for _, o := range cd.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			col.NotNull = true
		case ast.ColumnOptionNull:
			explicitNull = true
		case ast.ColumnOptionAutoIncrement:
			col.AutoInc = true
		case ast.ColumnOptionPrimaryKey:
			col.NotNull = true
			keys = append(keys, &ast.Constraint{Tp: ast.ConstraintPrimaryKey, Keys: []*ast.IndexPartSpecification{{Column: cd.Name}}})
		case ast.ColumnOptionUniqKey:
			keys = append(keys, &ast.Constraint{Tp: ast.ConstraintUniq, Name: name, Keys: []*ast.IndexPartSpecification{{Column: cd.Name}}})
		case ast.ColumnOptionDefaultValue:
			defNode = o.Expr
		case ast.ColumnOptionOnUpdate:
			col.OnUpdateNow = true
		case ast.ColumnOptionComment:
			if v, ok := o.Expr.(ast.ValueExpr); ok {
				col.Comment = fmt.Sprint(v.GetValue())
			}
		case ast.ColumnOptionCollate:
			c, ok := types.LookupCollation(strings.ToLower(o.StrValue))
			if !ok {
				return nil, nil, sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", o.StrValue)
			}
			col.Type.Collation, col.Type.Charset = c.Name, c.Charset
		case ast.ColumnOptionGenerated:
			if err := checkQualified(o.Expr, tbl, true); err != nil {
				return nil, nil, err
			}
			text, err := restoreValueExpr(o.Expr)
			if err != nil {
				return nil, nil, fmt.Errorf("generated column %s: restore: %w", name, err)
			}
			col.GenExpr, col.GenStored = text, o.Stored
		case ast.ColumnOptionCheck:
			keys = append(keys, &ast.Constraint{Tp: ast.ConstraintCheck, Name: o.ConstraintName, Expr: o.Expr, Enforced: o.Enforced})
		case ast.ColumnOptionReference, ast.ColumnOptionColumnFormat, ast.ColumnOptionStorage:
		}
	}
	if explicitNull && col.NotNull {
		return nil, nil, sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax: column '%s' is both NULL and NOT NULL", name)
	}
	if col.GenExpr != "" {
		// A generated column takes no DEFAULT, ON UPDATE or AUTO_INCREMENT (MySQL's 1221).
		switch {
		case defNode != nil:
			return nil, nil, sqlerr.New(sqlerr.ErrWrongUsage, "Incorrect usage of DEFAULT and generated column")
		case col.OnUpdateNow:
			return nil, nil, sqlerr.New(sqlerr.ErrWrongUsage, "Incorrect usage of ON UPDATE and generated column")
		case col.AutoInc:
			return nil, nil, sqlerr.New(sqlerr.ErrWrongUsage, "Incorrect usage of AUTO_INCREMENT and generated column")
		}
	}
	if defNode != nil {
		if err := checkQualified(defNode, tbl, false); err != nil {
			return nil, nil, err
		}
		if err := d.setDefault(col, defNode); err != nil {
			return nil, nil, err
		}
	}
	if col.AutoInc {
		if !col.Type.IsInteger() && col.Type.Tp != mysql.TypeFloat && col.Type.Tp != mysql.TypeDouble {
			return nil, nil, sqlerr.New(sqlerr.ErrWrongAutoKey, "Incorrect column specifier for column '%s'", name)
		}
		col.NotNull = true
		if col.HasDefault {
			return nil, nil, sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
	}
	return col, keys, nil
}

// setDefault evaluates a column's DEFAULT clause and stores it (converted) in col. A function
// call other than CURRENT_TIMESTAMP (DEFAULT (uuid())) and any expression in parentheses
// (DEFAULT (a + 1), which the facade hands over wrapped in ExprDefaultFunc) is an expression
// default: kept as text and evaluated per row; checkGenerated checks it with the whole table.
func (d *Stmt) setDefault(col *catalog.Column, defNode ast.ExprNode) error {
	name := col.Name
	col.DefaultExpr = ""
	if fc, ok := defNode.(*ast.FuncCallExpr); ok && !isNowFunc(fc.FnName.L) {
		n := defNode
		if fc.FnName.L == ExprDefaultFunc && len(fc.Args) == 1 {
			n = fc.Args[0]
		}
		text, err := restoreValueExpr(n)
		if err != nil {
			return fmt.Errorf("default of %s: restore: %w", name, err)
		}
		col.DefaultExpr, col.Default, col.DefaultNow, col.HasDefault = text, types.Null, false, true
		return nil
	}
	if fc, ok := defNode.(*ast.FuncCallExpr); ok && isNowFunc(fc.FnName.L) {
		if col.Type.Tp != mysql.TypeDatetime && col.Type.Tp != mysql.TypeTimestamp {
			return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
		col.DefaultNow, col.HasDefault = true, true
	} else {
		c := (&plan.Planner{Ctx: d.pc}).NewCompiler(&plan.Scope{})
		e, err := c.Compile(defNode)
		if err != nil {
			return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
		v, err := e.Eval(d.env, nil)
		if err != nil {
			return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
		}
		if v.IsNull() {
			if col.NotNull {
				return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
			}
		} else {
			if col.Type.IsBlob() {
				return sqlerr.New(sqlerr.ErrBlobCantHaveDefault, "BLOB, TEXT, GEOMETRY or JSON column '%s' can't have a default value", name)
			}
			cv, _, err := types.Convert(v, &col.Type, types.ConvertCtx{Strict: true, Column: name, Row: 1})
			if err != nil {
				return sqlerr.New(sqlerr.ErrInvalidDefault, "Invalid default value for '%s'", name)
			}
			v = cv
		}
		col.Default, col.HasDefault = v, true
	}
	return nil
}

func isNowFunc(n string) bool {
	switch n {
	case "now", "current_timestamp", "localtime", "localtimestamp":
		return true
	}
	return false
}
