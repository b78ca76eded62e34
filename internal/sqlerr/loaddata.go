package sqlerr

// Codes raised by LOAD DATA and LOCAL INFILE transfers (names as in MySQL 8's mysqld_error.h).
const (
	ErrWrongFieldTerminators    = 1083 // Field separator argument is not what is expected; check the manual
	ErrWarnTooFewRecords        = 1261 // Row %d doesn't contain data for all columns
	ErrWarnTooManyRecords       = 1262 // Row %d was truncated; it contained more data than there were input columns
	ErrWarnNullToNotNull        = 1263 // Column set to default value; NULL supplied to NOT NULL column '%s' at row %d
	ErrClientLocalFilesDisabled = 3948 // Loading local data is disabled; this must be enabled on both the client and server sides
)

func init() {
	for code, st := range map[uint16]string{
		ErrWrongFieldTerminators: "42000", ErrWarnTooFewRecords: "01000", ErrWarnTooManyRecords: "01000",
		ErrWarnNullToNotNull: "22004", ErrClientLocalFilesDisabled: "42000",
	} {
		states[code] = st
	}
}
