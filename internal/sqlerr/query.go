package sqlerr

// Codes raised while planning a query (names as in MySQL 8's mysqld_error.h).
const (
	ErrNoTablesUsed         = 1096 // No tables used
	ErrTooManyTables        = 1116 // Too many tables; MySQL can only use %d tables in a join
	ErrDerivedMustHaveAlias = 1248 // Every derived table must have its own alias
)

func init() {
	for code, st := range map[uint16]string{
		ErrNoTablesUsed: "HY000", ErrTooManyTables: "HY000", ErrDerivedMustHaveAlias: "42000",
	} {
		states[code] = st
	}
}
