package sqlerr

// Common table expression errors (MySQL 8.0's codes; all with SQLSTATE HY000, New's default).
const (
	ErrCTERecursiveRequiresUnion           = 3573
	ErrCTERecursiveRequiresNonrecursive    = 3574
	ErrCTERecursiveForbidsAggregation      = 3575
	ErrCTERecursiveForbiddenJoinOrder      = 3576
	ErrCTERecursiveRequiresSingleReference = 3577
	ErrCTEMaxRecursionDepth                = 3636
)
