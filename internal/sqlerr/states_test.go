package sqlerr

import "testing"

// TestStates: each code carries the SQLSTATE MySQL 8 sends with it (a client's error class, e.g.
// JDBC's SQLSyntaxErrorException for 42000, depends on it). Codes as numbers, so the table reads
// against MySQL's error reference.
func TestStates(t *testing.T) {
	for _, c := range []struct {
		code  uint16
		state string
	}{
		{1083, "42000"}, // ER_WRONG_FIELD_TERMINATORS
		{1089, "HY000"}, // ER_WRONG_SUB_KEY
		{1090, "42000"}, // ER_CANT_REMOVE_ALL_FIELDS
		{1096, "HY000"}, // ER_NO_TABLES_USED
		{1113, "42000"}, // ER_TABLE_MUST_HAVE_COLUMNS
		{1116, "HY000"}, // ER_TOO_MANY_TABLES
		{1156, "08S01"}, // ER_NET_PACKETS_OUT_OF_ORDER
		{1228, "HY000"}, // ER_LOCAL_VARIABLE
		{1238, "HY000"}, // ER_INCORRECT_GLOBAL_LOCAL_VAR
		{1248, "42000"}, // ER_DERIVED_MUST_HAVE_ALIAS
		{1261, "01000"}, // ER_WARN_TOO_FEW_RECORDS
		{1263, "22004"}, // ER_WARN_NULL_TO_NOTNULL
		{1421, "HY000"}, // ER_STMT_HAS_NO_OPEN_CURSOR
		{1470, "HY000"}, // ER_WRONG_STRING_LENGTH
		{1835, "HY000"}, // ER_MALFORMED_PACKET
		{3008, "HY000"}, // ER_FK_DEPTH_EXCEEDED
		{3160, "HY000"}, // ER_NO_SECURE_TRANSPORTS_CONFIGURED
		{3163, "HY000"}, // ER_USER_ALREADY_EXISTS
		{3619, "HY000"}, // ER_ILLEGAL_PRIVILEGE_LEVEL
		{3730, "HY000"}, // ER_FK_CANNOT_DROP_PARENT
		{3813, "HY000"}, // ER_COLUMN_CHECK_CONSTRAINT_REFERENCES_OTHER_COLUMN
		{3815, "HY000"}, // ER_CHECK_CONSTRAINT_FUNCTION_IS_NOT_ALLOWED
		{3819, "HY000"}, // ER_CHECK_CONSTRAINT_VIOLATED
		{3821, "HY000"}, // ER_CHECK_CONSTRAINT_NOT_FOUND
		{3822, "HY000"}, // ER_CHECK_CONSTRAINT_DUP_NAME
		{3929, "HY000"}, // ER_DYNAMIC_PRIV_NOT_REGISTERED
		{3948, "42000"}, // ER_CLIENT_LOCAL_FILES_DISABLED
		{1044, "42000"}, // ER_DBACCESS_DENIED_ERROR
		{1213, "40001"}, // ER_LOCK_DEADLOCK
	} {
		if got := New(c.code, "x").State; got != c.state {
			t.Errorf("%d: SQLSTATE %s, want %s", c.code, got, c.state)
		}
	}
}
