package sqlerr

// Codes raised by the wire protocol itself (names as in MySQL 8's mysqld_error.h).
const (
	ErrNetPacketsOutOfOrder = 1156 // Got packets out of order
	ErrStmtHasNoOpenCursor  = 1421 // The statement (%d) has no open cursor.
	ErrMalformedPacket      = 1835 // Malformed communication packet.
)

func init() {
	for code, st := range map[uint16]string{
		ErrNetPacketsOutOfOrder: "08S01", ErrStmtHasNoOpenCursor: "HY000", ErrMalformedPacket: "HY000",
	} {
		states[code] = st
	}
}
