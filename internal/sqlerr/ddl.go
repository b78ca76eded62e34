package sqlerr

// Codes raised by DDL and the constraints it defines: table shape, keys, CHECK constraints and
// foreign keys (names as in MySQL 8's mysqld_error.h; SQLSTATEs as its messages give them).
const (
	ErrWrongSubKey                                = 1089 // Incorrect prefix key; ...
	ErrCantRemoveAllFields                        = 1090 // You can't delete all columns with ALTER TABLE; use DROP TABLE instead
	ErrTableMustHaveColumns                       = 1113 // A table must have at least 1 column
	ErrFKDepthExceeded                            = 3008 // Foreign key cascade delete/update exceeds max depth of %d.
	ErrFKCannotDropParent                         = 3730 // Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.
	ErrColumnCheckConstraintReferencesOtherColumn = 3813 // Column check constraint '%s' references other column.
	ErrCheckConstraintFunctionIsNotAllowed        = 3815 // An expression of a check constraint '%s' contains disallowed function.
	ErrCheckConstraintViolated                    = 3819 // Check constraint '%s' is violated.
	ErrCheckConstraintNotFound                    = 3821 // Check constraint '%s' is not found in the table.
	ErrCheckConstraintDupName                     = 3822 // Duplicate check constraint name '%s'.
)

func init() {
	for code, st := range map[uint16]string{
		ErrWrongSubKey: "HY000", ErrCantRemoveAllFields: "42000", ErrTableMustHaveColumns: "42000",
		ErrFKDepthExceeded: "HY000", ErrFKCannotDropParent: "HY000",
		ErrColumnCheckConstraintReferencesOtherColumn: "HY000", ErrCheckConstraintFunctionIsNotAllowed: "HY000",
		ErrCheckConstraintViolated: "HY000", ErrCheckConstraintNotFound: "HY000", ErrCheckConstraintDupName: "HY000",
	} {
		states[code] = st
	}
}
