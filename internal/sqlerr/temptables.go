package sqlerr

// Codes raised by temporary tables (names as in MySQL's mysqld_error.h).
const (
	ErrCannotAddForeign = 1215 // Cannot add foreign key constraint
)

func init() { states[ErrCannotAddForeign] = "HY000" }
