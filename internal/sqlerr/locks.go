package sqlerr

// Codes raised by table locks, file export and identifier checks (names as in MySQL's
// mysqld_error.h).
const (
	ErrTableNotLockedForWrite = 1099 // Table '%s' was locked with a READ lock and can't be updated
	ErrTableNotLocked         = 1100 // Table '%s' was not locked with LOCK TABLES
	ErrCantUpdateWithReadlock = 1223 // Can't execute the query because you have a conflicting read lock
	ErrLockedTablesOrTxn      = 1192 // Can't execute the given command because you have active locked tables or an active transaction
	ErrTableDefChanged        = 1412 // Table definition has changed, please retry transaction
	ErrFileExists             = 1086 // File '%s' already exists
	ErrCantCreateFile         = 1004 // Can't create file '%s' (OS errno %d - %s)
	ErrErrorOnWrite           = 3    // Error writing file '%s' (OS errno %d - %s)
	ErrTooManyRows            = 1172 // Result consisted of more than one row
	ErrFileNotFound           = 29   // File '%s' not found (OS errno %d - %s)
)

func init() {
	for code, st := range map[uint16]string{
		ErrTableNotLockedForWrite: "HY000", ErrTableNotLocked: "HY000", ErrCantUpdateWithReadlock: "HY000",
		ErrLockedTablesOrTxn: "HY000", ErrTableDefChanged: "HY000", ErrFileExists: "HY000", ErrCantCreateFile: "HY000",
		ErrErrorOnWrite: "HY000", ErrTooManyRows: "42000", ErrFileNotFound: "HY000",
	} {
		states[code] = st
	}
}
