package sqlerr

// Codes raised by builtin functions (names as in MySQL's mysqld_error.h).
const (
	ErrWrongValueForType         = 1411 // Incorrect %s value: '%s' for function %s
	ErrWarnAllowedPacketOverflow = 1301
	ErrUnknownLocale             = 1649
	ErrCutValueGroupConcat       = 1260
	ErrUserLockWrongName         = 3057
	ErrJSONBadOneOrAllArg        = 3150
	ErrJSONPathNotArrayCell      = 3165
	ErrJSONNullMemberName        = 3158
	ErrRegexpIllegalArgument     = 3685
	ErrRegexpIndexOutOfBounds    = 3686
	ErrRegexpRuleSyntax          = 3688
	ErrRegexpBadEscapeSequence   = 3689
	ErrRegexpUnimplemented       = 3690
	ErrRegexpMismatchedParen     = 3691
	ErrRegexpBadInterval         = 3692
	ErrRegexpMaxLtMin            = 3693
	ErrRegexpInvalidBackRef      = 3694
	ErrRegexpMissingCloseBracket = 3696
	ErrRegexpInvalidRange        = 3697
	ErrRegexpPatternTooBig       = 3700
)

func init() {
	for code, st := range map[uint16]string{
		ErrWrongValueForType: "HY000", ErrWarnAllowedPacketOverflow: "HY000", ErrUnknownLocale: "HY000",
		ErrJSONBadOneOrAllArg: "42000", ErrJSONPathNotArrayCell: "42000", ErrJSONNullMemberName: "22032",
		ErrUserLockWrongName: "42000",
	} {
		states[code] = st
	}
}
