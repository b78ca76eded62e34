package sqlerr

// JSON_TABLE errors (MySQL 8.0's codes and SQLSTATEs).
const (
	ErrMissingJSONTableValue   = 3665 // Missing value for JSON_TABLE column '%s'
	ErrWrongJSONTableValue     = 3666 // Can't store an array or an object in the scalar column '%s' of JSON_TABLE
	ErrTFMustHaveAlias         = 3667 // Every table function must have an alias
	ErrTFForbiddenJoinType     = 3668 // INNER or LEFT JOIN must be used for LATERAL references made by '%s'
	ErrJTValueOutOfRange       = 3669 // Value is out of range for JSON_TABLE's column '%s'
	ErrJTMaxNestedPath         = 3670 // More than supported %u NESTED PATHs were found in JSON_TABLE '%s'
	ErrInvalidJSONValueForCast = 3156 // Invalid JSON value for CAST to %s%s from column %s at row %ld
)

func init() {
	states[ErrMissingJSONTableValue] = "22035"
	states[ErrWrongJSONTableValue] = "2203F"
	states[ErrTFMustHaveAlias] = "42000"
	states[ErrTFForbiddenJoinType] = "42000"
	states[ErrJTValueOutOfRange] = "22003"
	states[ErrJTMaxNestedPath] = "42000"
	states[ErrInvalidJSONValueForCast] = "22018"
}
