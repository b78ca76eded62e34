package plan

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// parseDecimalValue turns a decimal literal into a KindDecimal with the literal's scale.
func parseDecimalValue(s string) (types.Value, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return types.Null, err
	}
	frac := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		e := strings.IndexAny(s, "eE")
		if e < 0 {
			e = len(s)
		}
		frac = e - i - 1
	}
	return types.NewDecimal(d, frac), nil
}
