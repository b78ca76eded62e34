package sqlerr

// Codes raised by temporary tables (names as in MySQL's mysqld_error.h).
const (
	ErrCannotAddForeign   = 1215 // Cannot add foreign key constraint
	ErrViewSelectTmptable = 1352 // View's SELECT refers to a temporary table '%s'
)

func init() {
	states[ErrCannotAddForeign] = "HY000"
	states[ErrViewSelectTmptable] = "HY000"
}
