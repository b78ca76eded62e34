package plan

import (
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// maxSelectNesting is MySQL's MAX_SELECT_NESTING (63).
const maxSelectNesting = 63

func errSelectNesting() error {
	return sqlerr.New(sqlerr.ErrTooHighNesting, "Too high level of nesting for select")
}
