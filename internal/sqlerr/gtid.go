package sqlerr

// Codes raised by GTID sets (names as in MySQL 8's mysqld_error.h).
const (
	ErrMalformedGTIDSetSpecification = 1772 // Malformed GTID set specification '%s'.
)

func init() {
	states[ErrMalformedGTIDSetSpecification] = "HY000"
}
