package sqlerr

// Error codes of accounts and privileges (MySQL 8's), kept in their own file so the account work
// does not touch the shared table above.
const (
	ErrDBAccessDenied           = 1044
	ErrTableAccessDenied        = 1142
	ErrColumnAccessDenied       = 1143
	ErrIllegalGrantForTable     = 1144
	ErrPasswordNoMatch          = 1133
	ErrNonexistingGrant         = 1141
	ErrNonexistingTableGrant    = 1147
	ErrKillDenied               = 1095
	ErrCannotUser               = 1396
	ErrCantCreateUserWithGrant  = 1410
	ErrPasswordFormat           = 1827
	ErrPluginIsNotLoaded        = 1524
	ErrAccountLocked            = 3118
	ErrUserDoesNotExist         = 3162
	ErrWrongStringLength        = 1470 // String '%s' is too long for user name (should be no longer than %d)
	ErrUserAlreadyExists        = 3163 // Authorization ID %s already exists. (a note under IF NOT EXISTS)
	ErrIllegalPrivilegeLevel    = 3619 // Illegal privilege level specified for %s
	ErrDynamicPrivNotRegistered = 3929 // Dynamic privilege '%s' is not registered with the server.
)

func init() {
	for code, st := range map[uint16]string{
		ErrDBAccessDenied: "42000", ErrTableAccessDenied: "42000", ErrColumnAccessDenied: "42000",
		ErrIllegalGrantForTable: "42000", ErrPasswordNoMatch: "42000", ErrNonexistingGrant: "42000",
		ErrNonexistingTableGrant: "42000", ErrKillDenied: "HY000", ErrCannotUser: "HY000",
		ErrCantCreateUserWithGrant: "42000", ErrPasswordFormat: "HY000", ErrPluginIsNotLoaded: "HY000",
		ErrAccountLocked: "HY000", ErrUserDoesNotExist: "HY000", ErrSpecificAccessDenied: "42000",
		ErrWrongStringLength: "HY000", ErrUserAlreadyExists: "HY000", ErrIllegalPrivilegeLevel: "HY000",
		ErrDynamicPrivNotRegistered: "HY000",
	} {
		if _, ok := states[code]; !ok || code == ErrSpecificAccessDenied {
			states[code] = st
		}
	}
}
