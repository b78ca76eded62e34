package mysql

import (
	"math"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// timeParts is a date and time of day split into fields, for the binary protocol's DATE, DATETIME
// and TIMESTAMP encodings. KindDate and KindDatetime values carry it packed (types.PackTime).
type timeParts struct {
	year, month, day     int
	hour, minute, second int
	micro                int
}

func (t timeParts) valid() bool {
	return t.year >= 0 && t.year <= 9999 && t.month >= 0 && t.month <= 12 && t.day >= 0 && t.day <= 31 &&
		t.hour >= 0 && t.hour <= 23 && t.minute >= 0 && t.minute <= 59 && t.second >= 0 && t.second <= 59 &&
		t.micro >= 0 && t.micro <= 999999
}

func packTime(t timeParts) int64 {
	return types.PackTime(t.year, t.month, t.day, t.hour, t.minute, t.second, t.micro)
}

// unpackTime splits a packed value. The sign bit is ignored so that any input, even a corrupt one,
// gives non-negative fields within their bit widths, which the encoders can write as they are.
func unpackTime(p int64) timeParts {
	var t timeParts
	t.year, t.month, t.day, t.hour, t.minute, t.second, t.micro = types.UnpackTime(p & math.MaxInt64)
	return t
}
