// Package sqlerr owns the MySQL error values that cross layers: an error code, its SQLSTATE and a
// message. Every layer returns *Error for anything a client should see with a specific code; the wire
// protocol turns any other error into ER_UNKNOWN_ERROR (1105, HY000).
//
// Every code has a named constant here (MySQL's mysqld_error.h name) with its SQLSTATE in states;
// callers never pass a bare number. The common codes are below; the others are grouped by the
// layer that raises them: ddl.go, query.go, sysvar.go, loaddata.go, protocol.go, acl.go, funcs.go,
// locks.go, memory.go.
package sqlerr

import (
	"errors"
	"fmt"
)

// Error is a MySQL error as the client sees it.
type Error struct {
	Code    uint16
	State   string // five-character SQLSTATE
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.State, e.Message) }

// Common MySQL error codes (names as in MySQL's mysqld_error.h).
const (
	ErrConCount                     = 1040
	ErrHandshake                    = 1043
	ErrAccessDenied                 = 1045
	ErrNoDB                         = 1046
	ErrUnknownCom                   = 1047
	ErrBadNull                      = 1048
	ErrBadDB                        = 1049
	ErrTableExists                  = 1050
	ErrBadTable                     = 1051
	ErrNonUniq                      = 1052
	ErrBadField                     = 1054
	ErrWrongFieldWithGroup          = 1055
	ErrDupFieldName                 = 1060
	ErrDupKeyName                   = 1061
	ErrDupEntry                     = 1062
	ErrParse                        = 1064
	ErrEmptyQuery                   = 1065
	ErrNonUniqTable                 = 1066
	ErrInvalidDefault               = 1067
	ErrMultiplePriKey               = 1068
	ErrTooManyKeys                  = 1069
	ErrKeyColumnDoesNotExit         = 1072
	ErrCantDropFieldOrKey           = 1091
	ErrNoSuchThread                 = 1094
	ErrUnknownSystemVar             = 1193
	ErrWrongValueForVar             = 1231
	ErrWrongTypeForVar              = 1232
	ErrUnknownError                 = 1105
	ErrTooBigSelect                 = 1104
	ErrUnknownTable                 = 1109
	ErrFieldSpecifiedTwice          = 1110
	ErrInvalidGroupFuncUse          = 1111
	ErrTableMustHavePK              = 1173
	ErrRecordFileFull               = 1114
	ErrWrongValueCount              = 1136
	ErrNoSuchTable                  = 1146
	ErrSyntax                       = 1149
	ErrNetPacketTooLarge            = 1153
	ErrNetReadError                 = 1158
	ErrNetReadInterrupted           = 1159
	ErrTooLongIdent                 = 1059
	ErrWrongAutoKey                 = 1075
	ErrBlobKeyWithoutLength         = 1170
	ErrUnknownStmtHandler           = 1243
	ErrSubqueryNo1Row               = 1242
	ErrOperandColumns               = 1241
	ErrSpVarNotFound                = 1327
	ErrDiskFull                     = 1021
	ErrServerShutdown               = 1053
	ErrErrorDuringCommit            = 1180
	ErrLockWaitTimeout              = 1205
	ErrLockDeadlock                 = 1213
	ErrReadOnlyTrans                = 1207
	ErrCantChangeTxIsolation        = 1568
	ErrCantDoThisDuringATransaction = 1179
	ErrWrongArguments               = 1210
	ErrWrongParamCount              = 1582
	ErrUnknownCharset               = 1115
	ErrUnknownCollation             = 1273
	ErrWarnDataOutOfRange           = 1264
	ErrDataTooLong                  = 1406
	ErrTruncatedWrongValue          = 1292
	ErrTruncatedWrongValueForField  = 1366
	ErrDivisionByZero               = 1365
	ErrWarnDataTruncated            = 1265
	ErrWrongNumberOfColumnsInSelect = 1222
	ErrQueryInterrupted             = 1317
	ErrQueryTimeout                 = 3024
	ErrStackOverrun                 = 1436 // ER_STACK_OVERRUN_NEED_MORE
	ErrTooHighNesting               = 1473 // ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT
	ErrNotSupportedYet              = 1235
	ErrSavepointNotExist            = 1305
	ErrDupUnique                    = 1169
	ErrWrongDBName                  = 1102
	ErrWrongTableName               = 1103
	ErrWrongColumnName              = 1166
	ErrBlobCantHaveDefault          = 1101
	ErrTooBigPrecision              = 1426
	ErrTooBigScale                  = 1425
	ErrMBiggerThanD                 = 1427
	ErrTooBigFieldLength            = 1074
	ErrTooBigDisplayWidth           = 1439
	ErrWrongUsage                   = 1221
	ErrUnknownTimeZone              = 1298
	ErrDBCreateExists               = 1007
	ErrDBDropExists                 = 1008
	ErrTooManyFields                = 1117
	ErrNoDefaultForField            = 1364
	ErrAutoincReadFailed            = 1467
	ErrPsManyParam                  = 1390
	ErrInvalidUseOfNull             = 1138
	ErrSpDoesNotExist               = 1305
	ErrFuncNotExists                = 1305
	ErrViewWrongList                = 1353
	ErrDataOutOfRange               = 1690
	ErrCantDropFieldOrKeyIdx        = 1091
	ErrKeyDoesNotExist              = 1176
	ErrIllegalReference             = 1247
	ErrInvalidCharacterString       = 1300
	ErrOptionPreventsStatement      = 1290
	ErrSpecificAccessDenied         = 1227
	ErrCantReopenTable              = 1137
	ErrWrongArgCount                = 1582
	ErrUnsupportedPS                = 1295
	ErrIncorrectValue               = 1525
	ErrWrongNameForIndex            = 1280
	ErrWrongGroupField              = 1056
	ErrInvalidJSONText              = 3140
	ErrInvalidJSONTextInParam       = 3141
	ErrInvalidJSONPath              = 3143
	ErrInvalidJSONPathWildcard      = 3149
	ErrJSONUsedAsKey                = 3152
	ErrInvalidJSONCharset           = 3144
	ErrDuplicatedValueInType        = 1291
	ErrNoReferencedRow              = 1452
	ErrRowIsReferenced              = 1451
	ErrFKCannotOpenParent           = 1824
	ErrFKNoIndexParent              = 1822
	ErrFKIncompatibleColumns        = 3780
	ErrFKColumnCannotDrop           = 1828
	ErrFKDupName                    = 1826
	ErrFKCannotDropIndex            = 1553
	ErrFKColumnNotNull              = 1830
	ErrTruncateIllegalFK            = 1701
	ErrWrongObject                  = 1347
	ErrViewSelectDerived            = 1349
	ErrViewInvalid                  = 1356
	ErrViewNoExplain                = 1345
	ErrNonUpdatableTable            = 1288
	ErrIllegalValueForType          = 1367
	ErrTooBigSet                    = 1097
	ErrWrongFKDef                   = 1239
	ErrMixOfGroupFuncAndFields      = 1140
)

var states = map[uint16]string{
	ErrConCount: "08004", ErrHandshake: "08S01", ErrAccessDenied: "28000", ErrNoDB: "3D000",
	ErrUnknownCom: "08S01", ErrServerShutdown: "08S01", ErrBadNull: "23000", ErrBadDB: "42000", ErrTableExists: "42S01",
	ErrBadTable: "42S02", ErrNonUniq: "23000", ErrBadField: "42S22", ErrWrongFieldWithGroup: "42000",
	ErrDupFieldName: "42S21", ErrDupKeyName: "42000", ErrDupEntry: "23000", ErrParse: "42000",
	ErrEmptyQuery: "42000", ErrNonUniqTable: "42000", ErrInvalidDefault: "42000",
	ErrMultiplePriKey: "42000", ErrTooManyKeys: "42000", ErrKeyColumnDoesNotExit: "42000",
	ErrCantDropFieldOrKey: "42000", ErrUnknownSystemVar: "HY000", ErrWrongValueForVar: "42000",
	ErrWrongTypeForVar: "42000", ErrUnknownTable: "42S02", ErrFieldSpecifiedTwice: "42000",
	ErrInvalidGroupFuncUse: "HY000", ErrWrongValueCount: "21S01", ErrNoSuchTable: "42S02",
	ErrSyntax: "42000", ErrNetPacketTooLarge: "08S01", ErrNetReadError: "08S01",
	ErrNetReadInterrupted: "08S01", ErrTooLongIdent: "42000", ErrWrongAutoKey: "42000",
	ErrBlobKeyWithoutLength: "42000", ErrUnknownStmtHandler: "HY000", ErrSubqueryNo1Row: "21000",
	ErrOperandColumns: "21000", ErrLockWaitTimeout: "HY000", ErrLockDeadlock: "40001",
	ErrReadOnlyTrans: "25000", ErrWarnDataOutOfRange: "22003", ErrDataTooLong: "22001",
	ErrTruncatedWrongValue: "22007", ErrTruncatedWrongValueForField: "HY000", ErrDivisionByZero: "22012",
	ErrWarnDataTruncated: "01000", ErrWrongNumberOfColumnsInSelect: "21000", ErrQueryInterrupted: "70100",
	ErrNotSupportedYet: "42000", ErrSavepointNotExist: "42000", ErrWrongDBName: "42000",
	ErrWrongTableName: "42000", ErrWrongColumnName: "42000", ErrBlobCantHaveDefault: "42000",
	ErrTooBigPrecision: "42000", ErrTooBigScale: "42000", ErrMBiggerThanD: "42000",
	ErrTooBigFieldLength: "42000", ErrTooBigDisplayWidth: "42000", ErrDBCreateExists: "HY000",
	ErrDBDropExists: "HY000", ErrNoDefaultForField: "HY000", ErrPsManyParam: "42000",
	ErrInvalidUseOfNull: "42000", ErrDataOutOfRange: "22003", ErrKeyDoesNotExist: "42000",
	ErrIllegalReference: "42S22", ErrWrongArguments: "HY000", ErrWrongParamCount: "42000",
	ErrUnknownCharset: "42000", ErrUnknownCollation: "HY000",
	ErrCantDoThisDuringATransaction: "25000", ErrCantChangeTxIsolation: "25001", ErrViewWrongList: "HY000",
	ErrInvalidCharacterString: "HY000", ErrInvalidJSONText: "22032", ErrInvalidJSONTextInParam: "22032",
	ErrInvalidJSONPath: "42000", ErrInvalidJSONPathWildcard: "42000", ErrJSONUsedAsKey: "HY000",
	ErrInvalidJSONCharset: "22032", ErrDuplicatedValueInType: "HY000", ErrNoReferencedRow: "23000",
	ErrRowIsReferenced: "23000", ErrFKCannotOpenParent: "HY000", ErrFKNoIndexParent: "HY000",
	ErrFKIncompatibleColumns: "HY000", ErrFKColumnCannotDrop: "HY000", ErrFKDupName: "HY000",
	ErrFKCannotDropIndex: "HY000", ErrFKColumnNotNull: "HY000", ErrTruncateIllegalFK: "42000",
	ErrWrongObject: "HY000", ErrViewSelectDerived: "HY000", ErrViewInvalid: "HY000", ErrViewNoExplain: "HY000",
	ErrNonUpdatableTable: "HY000", ErrIllegalValueForType: "22007", ErrTooBigSet: "HY000", ErrWrongFKDef: "42000", ErrMixOfGroupFuncAndFields: "42000", ErrWrongUsage: "HY000", ErrQueryTimeout: "HY000",
}

// New returns an error with code's SQLSTATE and a formatted message.
func New(code uint16, format string, args ...any) *Error {
	st, ok := states[code]
	if !ok {
		st = "HY000"
	}
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Code: code, State: st, Message: msg}
}

// As returns the *Error inside err, or a 1105 error carrying err's text.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: ErrUnknownError, State: "HY000", Message: err.Error()}
}

// Is reports whether err carries the given MySQL code.
func Is(err error, code uint16) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Warning is a note, warning or error recorded for SHOW WARNINGS.
type Warning struct {
	Level   string // "Note", "Warning" or "Error"
	Code    uint16
	Message string
}
