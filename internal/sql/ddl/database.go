package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/kiln-db/kiln/internal/sql/catalog"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

func (d *Stmt) createDatabase(x *ast.CreateDatabaseStmt) error {
	name := x.Name.O
	if err := checkIdent(name, sqlerr.ErrWrongDBName, "database"); err != nil {
		return err
	}
	if _, ok := d.cat.DB(name); ok || d.pc.IsVirtualDB(name) {
		if x.IfNotExists {
			d.s.AddWarning("Note", sqlerr.ErrDBCreateExists, fmt.Sprintf("Can't create database '%s'; database exists", name))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrDBCreateExists, "Can't create database '%s'; database exists", name)
	}
	db := &catalog.Database{Name: name, Charset: "utf8mb4", Collation: "utf8mb4_0900_ai_ci"}
	for _, o := range x.Options {
		switch o.Tp {
		case ast.DatabaseOptionCharset:
			db.Charset = strings.ToLower(o.Value)
			if c, ok := types.DefaultCollation(db.Charset); ok {
				db.Collation = c.Name
			} else {
				return sqlerr.New(sqlerr.ErrUnknownCharset, "Unknown character set: '%s'", o.Value)
			}
		case ast.DatabaseOptionCollate:
			c, ok := types.LookupCollation(strings.ToLower(o.Value))
			if !ok {
				return sqlerr.New(sqlerr.ErrUnknownCollation, "Unknown collation: '%s'", o.Value)
			}
			db.Collation, db.Charset = c.Name, c.Charset
		}
	}
	d.cat.PutDB(db)
	d.affected = 1
	return catalog.SaveDB(d.t, db)
}

func (d *Stmt) dropDatabase(x *ast.DropDatabaseStmt) error {
	name := x.Name.O
	db, ok := d.cat.DB(name)
	if !ok {
		if x.IfExists {
			d.s.AddWarning("Note", sqlerr.ErrDBDropExists, fmt.Sprintf("Can't drop database '%s'; database doesn't exist", name))
			d.noop = true
			return nil
		}
		return sqlerr.New(sqlerr.ErrDBDropExists, "Can't drop database '%s'; database doesn't exist", name)
	}
	for _, t := range d.cat.Tables(db.Name) {
		d.dropTable(t)
		d.affected++
	}
	for _, v := range d.cat.Views(db.Name) {
		d.dropView(v)
		d.affected++
	}
	d.cat.RemoveDB(name)
	d.t.Delete(rowenc.DBDefKey(strings.ToLower(db.Name)))
	if strings.EqualFold(d.curDB(), name) {
		d.pc.SetCurrentDB("")
	}
	return nil
}
