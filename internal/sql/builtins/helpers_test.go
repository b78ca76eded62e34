package builtins

import (
	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// Value constructors of the tests (the same as internal/sql/types' tests).

func decV(s string, frac int) types.Value {
	return types.NewDecimal(decimal.RequireFromString(s), frac)
}

func dt(s string) types.Value {
	p, err := types.ParseDatetime(s, 6)
	if err != nil {
		panic(err)
	}
	_, _, _, _, _, _, us := types.UnpackTime(p)
	fsp := 0
	if us != 0 {
		fsp = 6
	}
	return types.NewDatetime(p, fsp)
}

func dateV(s string) types.Value {
	p, err := types.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return types.NewDate(p)
}

func durV(s string) types.Value {
	us, err := types.ParseDuration(s, 6)
	if err != nil {
		panic(err)
	}
	fsp := 0
	if us%1000000 != 0 {
		fsp = 6
	}
	return types.NewDuration(us, fsp)
}
