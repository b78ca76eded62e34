package builtins

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// Result size bounds. MySQL refuses to build a string result longer than the session's
// max_allowed_packet: the function returns NULL with warning 1301 (ER_WARN_ALLOWED_PACKET_OVERFLOWED).
// The functions whose result can be much larger than their arguments (REPEAT, LPAD, REPLACE,
// EXPORT_SET...) have a SizeFunc here that computes the result's length from the arguments without
// building it, so the caller can refuse before allocating. Functions whose result is at most a small
// constant factor of their arguments are checked by the caller after they run (CheckResultSize).

// SizeFunc returns the byte length a function's result would have for args (an upper bound where
// the exact figure would cost as much as the result), without building it. It saturates at
// math.MaxInt64 instead of overflowing.
type SizeFunc func(args []types.Value) int64

// MaxResultBytes is the largest result any function builds, whatever the caller's limit: the
// largest max_allowed_packet (1 GiB). It protects callers that do not check sizes themselves.
const MaxResultBytes = 1 << 30

// ErrResultTooLarge is the warning message format of 1301; its arguments are the function's SQL
// name and the limit.
const ErrResultTooLarge = "Result of %s() was larger than max_allowed_packet (%d) - truncated"

var sizeTable = map[string]SizeFunc{
	"concat":      sizeConcat,
	"concat_ws":   sizeConcatWS,
	"repeat":      sizeRepeat,
	"lpad":        sizePad,
	"rpad":        sizePad,
	"space":       sizeSpace,
	"replace":     sizeReplace,
	"insert_func": sizeInsert,
	"export_set":  sizeExportSet,
	"make_set":    sizeMakeSet,
	"hex":         sizeHex,
	"to_base64":   sizeToBase64,
	"quote":       sizeQuote,
	"char_func":   func(args []types.Value) int64 { return 4 * int64(len(args)) },
}

// LookupFuncSize returns the SizeFunc of builtin name, or nil when its result is never much larger
// than its arguments.
func LookupFuncSize(name string) SizeFunc { return sizeTable[name] }

// FuncSQLName is the name MySQL prints for a builtin in messages (the parser renames a few).
func FuncSQLName(name string) string {
	switch name {
	case "insert_func":
		return "insert"
	case "char_func":
		return "char"
	}
	return name
}

// ValueSize is an upper bound of the bytes v takes as text: exact for strings, the widest
// rendering for other kinds (a DECIMAL prints at most 65 digits, a sign, a point and a zero).
func ValueSize(v types.Value) int64 {
	switch v.K {
	case types.KindNull:
		return 0
	case types.KindString, types.KindBytes:
		return int64(len(v.S))
	case types.KindDecimal:
		return 70
	}
	return 32 // integers (20 digits + sign), doubles (%.17g), temporal values (26 characters)
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func sizeConcat(args []types.Value) int64 {
	var n int64
	for i := range args {
		n = satAdd(n, ValueSize(args[i]))
	}
	return n
}

func sizeConcatWS(args []types.Value) int64 {
	if args[0].K == types.KindNull {
		return 0
	}
	var n, k int64
	for i := range args[1:] {
		if args[1+i].K != types.KindNull {
			n = satAdd(n, ValueSize(args[1+i]))
			k++
		}
	}
	if k > 1 {
		n = satAdd(n, satMul(k-1, ValueSize(args[0])))
	}
	return n
}

func sizeRepeat(args []types.Value) int64 {
	if anyNull(args) {
		return 0
	}
	return satMul(ValueSize(args[0]), intArg(args[1]))
}

// sizePad is what MySQL checks for LPAD/RPAD: the length in characters times the character set's
// widest character (4 bytes for utf8mb4, 1 for binary strings), when the string must grow.
func sizePad(args []types.Value) int64 {
	if anyNull(args) {
		return 0
	}
	n := intArg(args[1])
	if n <= 0 {
		return 0
	}
	if n <= ValueSize(args[0]) {
		return n // a truncation (or small): never larger than the argument
	}
	if args[0].K == types.KindBytes || args[2].K == types.KindBytes {
		return n
	}
	return satMul(n, utf8.UTFMax)
}

func sizeSpace(args []types.Value) int64 {
	if args[0].K == types.KindNull {
		return 0
	}
	return max(intArg(args[0]), 0)
}

// sizeReplace counts the matches first: the result is exact.
func sizeReplace(args []types.Value) int64 {
	if anyNull(args) {
		return 0
	}
	s, from := types.ToString(args[0]), types.ToString(args[1])
	if from == "" {
		return int64(len(s))
	}
	grow := ValueSize(args[2]) - int64(len(from))
	if grow <= 0 {
		return int64(len(s))
	}
	return satAdd(int64(len(s)), satMul(int64(strings.Count(s, from)), grow))
}

func sizeInsert(args []types.Value) int64 {
	if anyNull(args) {
		return 0
	}
	return satAdd(ValueSize(args[0]), ValueSize(args[3]))
}

func sizeExportSet(args []types.Value) int64 {
	if anyNull(args) {
		return 0
	}
	n := int64(64)
	if len(args) > 4 {
		if m := intArg(args[4]); m >= 0 && m <= 64 {
			n = m
		}
	}
	sep := int64(1)
	if len(args) > 3 {
		sep = ValueSize(args[3])
	}
	return satAdd(satMul(n, max(ValueSize(args[1]), ValueSize(args[2]))), satMul(n, sep))
}

func sizeMakeSet(args []types.Value) int64 {
	if args[0].K == types.KindNull {
		return 0
	}
	b := toBits(args[0])
	var n int64
	for i := range args[1:] {
		if i < 64 && b&(1<<uint(i)) != 0 {
			n = satAdd(n, ValueSize(args[1+i])+1)
		}
	}
	return n
}

func sizeHex(args []types.Value) int64 {
	if args[0].K == types.KindString || args[0].K == types.KindBytes {
		return satMul(2, int64(len(args[0].S)))
	}
	return 2 * ValueSize(args[0])
}

// sizeToBase64: 4 bytes per 3, plus a line break every 76 characters.
func sizeToBase64(args []types.Value) int64 {
	if args[0].K == types.KindNull {
		return 0
	}
	enc := (ValueSize(args[0]) + 2) / 3 * 4
	return enc + enc/76
}

// sizeQuote counts the characters QUOTE escapes.
func sizeQuote(args []types.Value) int64 {
	if args[0].K != types.KindString && args[0].K != types.KindBytes {
		return ValueSize(args[0]) + 2
	}
	s := args[0].S
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '\'', 0, 032:
			n++
		}
	}
	return n
}
