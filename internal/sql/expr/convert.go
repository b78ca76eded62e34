package expr

import (
	"github.com/kiln-db/kiln/internal/sql/types"
)

// ToIntLenient converts to int64 the way a LIMIT or a CAST does: rounding, clamping, never failing
// (types.ToIntLenient; the short name is the facade's).
func ToIntLenient(v types.Value) int64 { return types.ToIntLenient(v) }
