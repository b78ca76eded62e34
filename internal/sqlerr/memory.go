package sqlerr

// ErrCapacityExceeded (ER_CAPACITY_EXCEEDED, "Memory capacity of %llu bytes for '%s' exceeded. %s"):
// a statement needed more memory than its quota (kiln_mem_quota_query) or than the server could
// admit (kiln_memory_limit). The statement fails; the session and server go on.
const ErrCapacityExceeded = 3170

func init() { states[ErrCapacityExceeded] = "HY000" }
