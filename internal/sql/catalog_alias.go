package sql

import "github.com/kiln-db/kiln/internal/sql/catalog"

// Temporary aliases for the definitions moved to internal/sql/catalog; the next commit renames
// their uses and removes this file.
type (
	Database        = catalog.Database
	Column          = catalog.Column
	IndexColumn     = catalog.IndexColumn
	Index           = catalog.Index
	Table           = catalog.Table
	CheckCache      = catalog.CheckCache
	Catalog         = catalog.Catalog
	Writer          = catalog.Writer
	CheckConstraint = catalog.CheckConstraint
	ForeignKey      = catalog.ForeignKey
	View            = catalog.View
	FKRef           = catalog.FKRef
)

var (
	New              = catalog.New
	SaveTable        = catalog.SaveTable
	SaveDB           = catalog.SaveDB
	SaveNextTableID  = catalog.SaveNextTableID
	SaveView         = catalog.SaveView
	CheckKeyVersions = catalog.CheckKeyVersions
)
