package sqlerr

// Window function errors (MySQL 8.0's codes; all with SQLSTATE HY000, New's default).
const (
	ErrWindowNoSuchWindow          = 3579
	ErrWindowCircularity           = 3580
	ErrWindowNoChildPartitioning   = 3581
	ErrWindowNoInheritFrame        = 3582
	ErrWindowNoRedefineOrderBy     = 3583
	ErrWindowFrameStartIllegal     = 3584
	ErrWindowFrameEndIllegal       = 3585
	ErrWindowFrameIllegal          = 3586
	ErrWindowRangeFrameOrderType   = 3587
	ErrWindowRangeFrameTemporal    = 3588
	ErrWindowRangeFrameNumeric     = 3589
	ErrWindowRangeBoundNotConstant = 3590
	ErrWindowDuplicateName         = 3591
	ErrWindowIllegalOrderBy        = 3592
	ErrWindowInvalidWindowFuncUse  = 3593
	ErrWindowInvalidAliasUse       = 3594
	ErrWindowNestedInSpec          = 3595
	ErrWindowRowsIntervalUse       = 3596
)
