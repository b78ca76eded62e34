package main

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rendering of result values, as the corpus expects them (it was written for
// SQLite; see /work/shared/sqllogictest/README.md):
//
//	NULL          -> "NULL" (whatever the column type)
//	I             -> an integer, truncated toward zero: DECIMAL 3.5000 -> "3",
//	                 -2.7 -> "-2"; text that is not a number -> "0" (SQLite's
//	                 and ODBC's conversion); a leading numeric prefix counts
//	R             -> fmt "%.3f" of the value as a double
//	T             -> the text, each byte < ' ' or > '~' replaced by '@';
//	                 the empty string -> "(empty)"

// Render renders one value for a column of type typ ('I', 'R' or 'T'). v is
// what the MySQL driver returns in the text protocol: nil, []byte, int64,
// uint64, float32, float64 (or time.Time with parseTime).
func Render(v any, typ byte) string {
	if v == nil {
		return "NULL"
	}
	switch typ {
	case 'I':
		return renderInt(v)
	case 'R':
		return fmt.Sprintf("%.3f", toFloat(v))
	default:
		return renderText(textOf(v))
	}
}

func textOf(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float32:
		return mysqlFloatText(float64(x), 32)
	case float64:
		return mysqlFloatText(x, 64)
	case time.Time:
		return x.Format("2006-01-02 15:04:05")
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}

// mysqlFloatText formats a double the way MySQL's text protocol does for the
// common cases: shortest round-trip digits, exponent without '+' or padding
// (1e20, 1.5e-7).
func mysqlFloatText(f float64, bits int) string {
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		neg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(exp, "+-")
		exp = strings.TrimLeft(exp, "0")
		if exp == "" {
			exp = "0"
		}
		if neg {
			exp = "-" + exp
		}
		s = mant + "e" + exp
	}
	return s
}

func renderText(s string) string {
	if s == "" {
		return "(empty)"
	}
	b := []byte(s)
	for i, c := range b {
		if c < ' ' || c > '~' {
			b[i] = '@'
		}
	}
	return string(b)
}

func renderInt(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float32:
		return truncFloat(float64(x))
	case float64:
		return truncFloat(x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return intText(textOf(v))
}

func truncFloat(f float64) string {
	if math.IsNaN(f) {
		return "0"
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return strconv.FormatInt(math.MaxInt64, 10)
		}
		return strconv.FormatInt(math.MinInt64, 10)
	}
	t := math.Trunc(f)
	if t == 0 {
		return "0"
	}
	if t >= -9.2e18 && t <= 9.2e18 {
		return strconv.FormatInt(int64(t), 10)
	}
	return new(big.Float).SetFloat64(t).Text('f', 0)
}

// numPrefix splits s (after leading white space) into its longest numeric
// prefix: sign, integer digits, fraction digits and exponent. ok is false if
// there is no digit in the mantissa.
func numPrefix(s string) (neg bool, intPart, frac, exp string, ok bool) {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	st := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart = s[st:i]
	if i < len(s) && s[i] == '.' {
		i++
		st = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[st:i]
	}
	if intPart == "" && frac == "" {
		return false, "", "", "", false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		st := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > st {
			exp = s[i+1 : j]
		}
	}
	return neg, intPart, frac, exp, true
}

// intText converts a textual number (DECIMAL, a string) to an integer
// truncated toward zero, exactly (no float rounding) unless it has an
// exponent.
func intText(s string) string {
	neg, ip, frac, exp, ok := numPrefix(s)
	if !ok {
		return "0"
	}
	if exp != "" {
		num := ip
		if frac != "" {
			num += "." + frac
		}
		f, err := strconv.ParseFloat(num+"e"+exp, 64)
		if err != nil && !math.IsInf(f, 0) {
			return "0"
		}
		if neg {
			f = -f
		}
		return truncFloat(f)
	}
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		return "0"
	}
	if neg {
		return "-" + ip
	}
	return ip
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	}
	s := textOf(v)
	neg, ip, frac, exp, ok := numPrefix(s)
	if !ok {
		return 0
	}
	num := ip
	if num == "" {
		num = "0"
	}
	if frac != "" {
		num += "." + frac
	}
	if exp != "" {
		num += "e" + exp
	}
	f, _ := strconv.ParseFloat(num, 64) // out of range gives ±Inf, as strtod
	if neg {
		f = -f
	}
	return f
}

// SortValues sorts the flat list of rendered values as the sort mode says:
// rowsort sorts rows of ncol values (compared value by value, bytewise, as
// strcmp), valuesort sorts every value on its own, nosort leaves them.
func SortValues(vals []string, ncol int, mode string) {
	switch mode {
	case "rowsort":
		if ncol <= 0 || len(vals)%ncol != 0 {
			return
		}
		nrow := len(vals) / ncol
		rows := make([][]string, nrow)
		for i := range rows {
			rows[i] = vals[i*ncol : (i+1)*ncol : (i+1)*ncol]
		}
		sorted := make([][]string, nrow)
		for i := range rows {
			sorted[i] = append([]string(nil), rows[i]...)
		}
		sort.SliceStable(sorted, func(a, b int) bool {
			for k := 0; k < ncol; k++ {
				if c := strings.Compare(sorted[a][k], sorted[b][k]); c != 0 {
					return c < 0
				}
			}
			return false
		})
		for i := range sorted {
			copy(vals[i*ncol:], sorted[i])
		}
	case "valuesort":
		sort.Strings(vals)
	}
}

// HashValues returns the md5 (lower-case hex) of the values, each followed by
// a newline: the hash in "N values hashing to H".
func HashValues(vals []string) string {
	h := md5.New()
	for _, v := range vals {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// HashLine formats the expected-result line for hashed results.
func HashLine(vals []string) string {
	return fmt.Sprintf("%d values hashing to %s", len(vals), HashValues(vals))
}
