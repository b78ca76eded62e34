package sqlerr

// Codes raised by SET of system variables (names as in MySQL 8's mysqld_error.h).
const (
	ErrLocalVariable                = 1228 // Variable '%s' is a SESSION variable and can't be used with SET GLOBAL
	ErrGlobalVariable               = 1229 // Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL
	ErrIncorrectGlobalLocalVar      = 1238 // Variable '%s' is a read only variable (and other %s variable cases)
	ErrVariableIsReadonly           = 1621 // %s variable '%s' is read-only. Use SET %s to assign the value
	ErrNoSecureTransportsConfigured = 3160 // No secure transports (SSL or Shared Memory) are configured, unable to set --require_secure_transport=ON.
)

func init() {
	for code, st := range map[uint16]string{
		ErrLocalVariable: "HY000", ErrGlobalVariable: "HY000", ErrIncorrectGlobalLocalVar: "HY000",
		ErrVariableIsReadonly:           "HY000",
		ErrNoSecureTransportsConfigured: "HY000",
	} {
		states[code] = st
	}
}
