package sqlerr

// Codes of generated columns and expression defaults (names and messages as in MySQL 8's
// mysqld_error.h / messages_to_clients.txt).
const (
	ErrGeneratedColumnFunctionIsNotAllowed      = 3102 // Expression of generated column '%s' contains a disallowed function.
	ErrWrongFKOptionForGeneratedColumn          = 3104 // Cannot define foreign key with %s clause on a generated column.
	ErrBadGeneratedColumn                       = 3105 // The value specified for generated column '%s' in table '%s' is not allowed.
	ErrUnsupportedOnGeneratedColumn             = 3106 // '%s' is not supported for generated columns.
	ErrGeneratedColumnNonPrior                  = 3107 // Generated column can refer only to generated columns defined prior to it.
	ErrDependentByGeneratedColumn               = 3108 // Column '%s' has a generated column dependency.
	ErrGeneratedColumnRefAutoInc                = 3109 // Generated column '%s' cannot refer to auto-increment column.
	ErrCannotAddForeignBaseColStored            = 3192 // Cannot add foreign key on the base column of stored column. (InnoDB; MySQL may end it with a space)
	ErrFKCannotUseVirtualColumn                 = 3733 // Foreign key '%s' uses virtual column '%s' which is not supported.
	ErrGeneratedColumnNamedFunctionIsNotAllowed = 3763 // Expression of generated column '%s' contains a disallowed function: %s.
	ErrGeneratedColumnVariables                 = 3765 // Expression of generated column '%s' cannot refer user or system variables.
	ErrDefaultValGeneratedNonPrior              = 3767 // Default value expression of column '%s' cannot refer to a column defined after it if that column is a generated column or has an expression as default value.
	ErrDefaultValGeneratedRefAutoInc            = 3768 // Default value expression of column '%s' cannot refer to an auto-increment column.
	ErrDefaultValGeneratedFunctionIsNotAllowed  = 3769 // Default value expression of column '%s' contains a disallowed function.
	ErrDefaultValGeneratedVariables             = 3772 // Default value expression of column '%s' cannot refer user or system variables.
)

func init() {
	for _, code := range []uint16{
		ErrGeneratedColumnFunctionIsNotAllowed, ErrWrongFKOptionForGeneratedColumn, ErrBadGeneratedColumn,
		ErrUnsupportedOnGeneratedColumn, ErrGeneratedColumnNonPrior, ErrDependentByGeneratedColumn,
		ErrGeneratedColumnRefAutoInc, ErrCannotAddForeignBaseColStored, ErrFKCannotUseVirtualColumn,
		ErrGeneratedColumnNamedFunctionIsNotAllowed, ErrGeneratedColumnVariables,
		ErrDefaultValGeneratedNonPrior, ErrDefaultValGeneratedRefAutoInc,
		ErrDefaultValGeneratedFunctionIsNotAllowed, ErrDefaultValGeneratedVariables,
	} {
		states[code] = "HY000"
	}
}
