package expr

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

var uuidShort struct {
	once sync.Once
	next atomic.Uint64
}

// NextUUIDShort is UUID_SHORT(): the server id's low byte, the startup time in seconds, and a
// counter; serverID is read only by the first call of the process.
func NextUUIDShort(serverID func() uint64) uint64 {
	uuidShort.once.Do(func() {
		uuidShort.next.Store((serverID()&255)<<56 + uint64(time.Now().Unix())<<24)
	})
	return uuidShort.next.Add(1) - 1
}

// TruncMicros truncates microseconds to fsp digits.
func TruncMicros(us, fsp int) int {
	div := 1
	for i := fsp; i < 6; i++ {
		div *= 10
	}
	return us / div * div
}

// Benchmark is BENCHMARK(count, expr): evaluates expr count times and returns 0; a negative count
// is NULL with a warning. A killed statement stops it.
func Benchmark(env *Env, row []types.Value, a []Expr) (types.Value, error) {
	cv, err := a[0].Eval(env, row)
	if err != nil || cv.IsNull() {
		return types.Null, err
	}
	var n uint64
	if cv.K == types.KindUint {
		n = cv.U()
	} else if i := types.ToIntLenient(cv); i >= 0 {
		n = uint64(i)
	} else {
		env.Warn(sqlerr.New(sqlerr.ErrWrongValueForType, "Incorrect count value: '%d' for function benchmark", i))
		return types.Null, nil
	}
	if _, ok := a[1].(*Row); ok {
		return types.Null, sqlerr.New(sqlerr.ErrOperandColumns, "Operand should contain 1 column(s)")
	}
	for i := uint64(0); i < n; i++ {
		if i&1023 == 0 {
			if err := env.Interrupted(); err != nil {
				return types.Null, err
			}
		}
		if _, err := a[1].Eval(env, row); err != nil {
			return types.Null, err
		}
	}
	return types.NewInt(0), nil
}

// ExprFsp is the fractional-seconds precision a time function gives a result computed from e: a
// constant's own digits, an integer 0, a decimal its scale, a temporal value its fsp, else 6.
func ExprFsp(e Expr) int {
	if k, ok := e.(*Const); ok {
		if k.V.K == types.KindFloat {
			return 6
		}
		return builtins.TimeFsp(k.V)
	}
	t := e.Type()
	switch {
	case IsIntType(t), t.Tp == mysql.TypeNull, t.Tp == mysql.TypeDate:
		return 0
	case t.Tp == mysql.TypeNewDecimal, t.Tp == mysql.TypeDatetime, t.Tp == mysql.TypeTimestamp, t.Tp == mysql.TypeDuration:
		return min(max(t.Frac, 0), 6)
	}
	return 6
}

// NumFsp is the fractional precision a time function gives a result computed from the number e
// (FROM_UNIXTIME, SEC_TO_TIME, MAKETIME's seconds): an integer 0, a decimal its scale, else 6.
func NumFsp(e Expr) int {
	t := e.Type()
	if k, ok := e.(*Const); ok {
		t = TypeOfValue(k.V)
	}
	switch {
	case IsIntType(t), t.Tp == mysql.TypeNull:
		return 0
	case t.Tp == mysql.TypeNewDecimal:
		return min(max(t.Frac, 0), 6)
	}
	return 6
}

// DaysIn is the number of days of month m of year y.
func DaysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// MaxUnixTime is the largest FROM_UNIXTIME argument (3001-01-19 03:14:07.999999 UTC).
const MaxUnixTime = 32536771199

// FromUnixtime is FROM_UNIXTIME(ts[, format]) in the session time zone.
func FromUnixtime(env *Env, vs []types.Value, fsp int) (types.Value, error) {
	ts := vs[0]
	var sec, us int64
	switch ts.K {
	case types.KindInt:
		sec = ts.I
	case types.KindUint:
		if ts.U() > MaxUnixTime {
			return types.Null, nil
		}
		sec = ts.I
	default:
		d := types.ToDecimal(ts)
		if d.Sign() < 0 || d.GreaterThanOrEqual(types.ToDecimal(types.NewInt(MaxUnixTime+1))) {
			return types.Null, nil
		}
		whole := d.Truncate(0)
		sec = whole.IntPart()
		us = d.Sub(whole).Shift(6).Truncate(0).IntPart()
	}
	if sec < 0 || sec > MaxUnixTime {
		return types.Null, nil
	}
	us = int64(TruncMicros(int(us), fsp))
	t := time.Unix(sec, us*1000).In(env.Sess.Location())
	p := types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), int(us))
	if len(vs) == 1 {
		return types.NewDatetime(p, fsp), nil
	}
	f, _, _, _ := builtins.LookupFunc("date_format")
	return f([]types.Value{types.NewDatetime(p, fsp), vs[1]})
}

// tzCache holds the named time zones CONVERT_TZ loaded.
var tzCache sync.Map

// lookupTZ resolves a CONVERT_TZ zone: an offset '+HH:MM' (-13:59 to +14:00), SYSTEM, or a named
// zone of the system's time zone database; nil when unknown.
func lookupTZ(name string) *time.Location {
	if len(name) > 0 && (name[0] == '+' || name[0] == '-') {
		h, m, ok := strings.Cut(name[1:], ":")
		if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
			return nil
		}
		hh, mm := atoiSmall(h), atoiSmall(m)
		off := hh*60 + mm
		if hh < 0 || mm < 0 || mm > 59 || (name[0] == '+' && off > 14*60) || (name[0] == '-' && off > 13*60+59) {
			return nil
		}
		if name[0] == '-' {
			off = -off
		}
		return time.FixedZone(name, off*60)
	}
	key := strings.ToLower(name)
	if l, ok := tzCache.Load(key); ok {
		return l.(*time.Location)
	}
	loc, err := sysvar.ParseTimeZone(name)
	if err != nil || name == "" || name == "Local" {
		loc = nil
	}
	tzCache.Store(strings.Clone(key), loc) // key may alias a row's reused buffer
	return loc
}

func atoiSmall(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// ConvertTZ is CONVERT_TZ(dt, from, to): NULL for an unknown zone or a zero date; values outside
// the TIMESTAMP range are returned unconverted, as MySQL does.
func ConvertTZ(vs []types.Value, fsp int) types.Value {
	p, ok := builtins.DatetimeArg(vs[0])
	if !ok {
		return types.Null
	}
	from, to := lookupTZ(types.ToString(vs[1])), lookupTZ(types.ToString(vs[2]))
	if from == nil || to == nil {
		return types.Null
	}
	y, mo, d, h, mi, s, us := types.UnpackTime(p)
	if mo == 0 || d == 0 {
		return types.Null
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, us*1000, from)
	if u := t.Unix(); u >= 0 && u <= 1<<31-1 {
		t = t.In(to)
		p = types.PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), us)
	}
	return types.NewDatetime(p, fsp)
}
