package builtins

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// String, numeric and network functions beyond the basic set of funcs.go.

func registerStringFuncs(t map[string]funcDef) {
	for name, d := range map[string]funcDef{
		"ord":             {1, 1, fnOrd, nil},
		"bin":             {1, 1, fnBaseN(2), nil},
		"oct":             {1, 1, fnBaseN(8), nil},
		"conv":            {3, 3, fnConv, nil},
		"field":           {2, -1, nil, fnField},
		"elt":             {2, -1, fnElt, nil},
		"find_in_set":     {2, 2, nil, fnFindInSet},
		"insert_func":     {4, 4, fnInsert, nil},
		"substring_index": {3, 3, fnSubstringIndex, nil},
		"soundex":         {1, 1, fnSoundex, nil},
		"quote":           {1, 1, fnQuote, nil},
		"to_base64":       {1, 1, fnToBase64, nil},
		"from_base64":     {1, 1, fnFromBase64, nil},
		"bit_length":      {1, 1, fnBitLength, nil},
		"make_set":        {2, -1, fnMakeSet, nil},
		"export_set":      {3, 5, fnExportSet, nil},
		"char_func":       {1, -1, fnChar, nil},
		"format":          {2, 3, fnFormat, nil},
		"inet_aton":       {1, 1, fnInetAton, nil},
		"inet_ntoa":       {1, 1, fnInetNtoa, nil},
		"inet6_aton":      {1, 1, fnInet6Aton, nil},
		"inet6_ntoa":      {1, 1, fnInet6Ntoa, nil},
		"is_ipv4":         {1, 1, fnIsIPv4, nil},
		"is_ipv6":         {1, 1, fnIsIPv6, nil},
		"is_ipv4_compat":  {1, 1, fnIsIPv4Compat(false), nil},
		"is_ipv4_mapped":  {1, 1, fnIsIPv4Compat(true), nil},
		"is_uuid":         {1, 1, fnIsUUID, nil},
		"uuid_to_bin":     {1, 2, fnUUIDToBin, nil},
		"bin_to_uuid":     {1, 2, fnBinToUUID, nil},
		"bit_count":       {1, 1, fnBitCount, nil},
		"sin":             {1, 1, fnFloat1("sin", math.Sin, nil), nil},
		"cos":             {1, 1, fnFloat1("cos", math.Cos, nil), nil},
		"tan":             {1, 1, fnFloat1("tan", math.Tan, nil), nil},
		"asin":            {1, 1, fnFloat1("asin", math.Asin, unitRange), nil},
		"acos":            {1, 1, fnFloat1("acos", math.Acos, unitRange), nil},
		"atan":            {1, 2, fnAtan, nil},
		"atan2":           {2, 2, fnAtan, nil},
		"cot":             {1, 1, fnCot, nil},
		"radians":         {1, 1, fnFloat1("radians", func(x float64) float64 { return x * (math.Pi / 180) }, nil), nil},
		"degrees":         {1, 1, fnFloat1("degrees", func(x float64) float64 { return x * (180 / math.Pi) }, nil), nil},
		"interval":        {2, -1, fnInterval, nil},
	} {
		t[name] = d
	}
}

func unitRange(x float64) bool { return x >= -1 && x <= 1 }

// anyBin reports whether any argument is a binary string (the result is then binary too).
func anyBin(args []types.Value) bool {
	for i := range args {
		if args[i].K == types.KindBytes {
			return true
		}
	}
	return false
}

// fnOrd is ORD: the leftmost character's code, multibyte characters as their bytes in big-endian
// order (ORD('é') = 0xC3A9), as MySQL computes it.
func fnOrd(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull {
		return types.Null, nil
	}
	s := types.ToString(a)
	if s == "" {
		return types.NewInt(0), nil
	}
	if a.K == types.KindBytes {
		return types.NewInt(int64(s[0])), nil
	}
	_, size := utf8.DecodeRuneInString(s)
	n := int64(0)
	for i := 0; i < size; i++ {
		n = n<<8 | int64(s[i])
	}
	return types.NewInt(n), nil
}

// ---- CONV, BIN, OCT ----

// strntoull parses s as MySQL's my_strntoull does: leading blanks, an optional sign, then the
// longest run of digits valid in base (none gives 0); overflow gives the maximum, a minus sign
// negates in two's complement.
func strntoull(s string, base int) uint64 {
	n, neg, overflow := scanBase(s, base)
	if overflow {
		return math.MaxUint64
	}
	if neg {
		return -n
	}
	return n
}

// strntoll is the signed variant (my_strntoll): overflow clips to the int64 range.
func strntoll(s string, base int) int64 {
	n, neg, overflow := scanBase(s, base)
	switch {
	case neg && (overflow || n > 1<<63):
		return math.MinInt64
	case !neg && (overflow || n > math.MaxInt64):
		return math.MaxInt64
	case neg:
		return -int64(n)
	}
	return int64(n)
}

// scanBase reads blanks, a sign and the longest run of base-digits of s: the magnitude modulo
// 2^64, the sign, and whether the magnitude overflowed 64 bits.
func scanBase(s string, base int) (n uint64, neg, overflow bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	for ; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		hi, lo := bits.Mul64(n, uint64(base))
		lo, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			overflow = true
		}
		n = lo
	}
	return n, neg, overflow
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// conv is CONV(s, from, to): a negative from parses signed, a negative to prints signed.
func conv(s string, from, to int64) (types.Value, bool) {
	if from < -36 || from > 36 || (from > -2 && from < 2) || to < -36 || to > 36 || (to > -2 && to < 2) || s == "" {
		return types.Null, false
	}
	var n uint64
	if from < 0 {
		n = uint64(strntoll(s, int(-from)))
	} else {
		n = strntoull(s, int(from))
	}
	var out string
	if to < 0 && int64(n) < 0 {
		out = "-" + strconv.FormatUint(-n, int(-to))
	} else {
		out = strconv.FormatUint(n, int(max(to, -to)))
	}
	return types.NewString(strings.ToUpper(out)), true
}

func fnConv(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	v, _ := conv(types.ToString(args[0]), intArg(args[1]), intArg(args[2]))
	return v, nil
}

// fnBaseN is BIN and OCT: CONV(n, 10, base).
func fnBaseN(base int64) Func {
	return func(args []types.Value) (types.Value, error) {
		if args[0].K == types.KindNull {
			return types.Null, nil
		}
		v, _ := conv(types.ToString(args[0]), 10, base)
		return v, nil
	}
}

// ---- FIELD, ELT, FIND_IN_SET, MAKE_SET, EXPORT_SET ----

// fnField is FIELD(s, s1, s2, ...): all strings compare as strings under the collation, all
// integers as integers, exact numbers as decimals, anything else as doubles. NULL never matches.
func fnField(coll *types.Collation) Func {
	return func(args []types.Value) (types.Value, error) {
		if args[0].K == types.KindNull {
			return types.NewInt(0), nil
		}
		allStr, allInt, allExact, bin := true, true, true, false
		for _, a := range args {
			switch {
			case a.K == types.KindNull:
			case a.K == types.KindString || a.K == types.KindBytes || a.K == types.KindDate || a.K == types.KindDatetime || a.K == types.KindDuration:
				allInt, allExact = false, false
				bin = bin || a.K == types.KindBytes
			case a.K == types.KindInt || a.K == types.KindUint:
				allStr = false
			case a.K == types.KindDecimal:
				allStr, allInt = false, false
			default:
				allStr, allInt, allExact = false, false, false
			}
		}
		c := coll
		if bin {
			c = nil
		}
		x := args[0]
		for i, a := range args[1:] {
			if a.K == types.KindNull {
				continue
			}
			var eq bool
			switch {
			case allStr:
				eq = c.Compare(types.ToString(x), types.ToString(a)) == 0
			case allInt:
				eq = types.Compare(x, a, nil) == 0
			case allExact:
				eq = types.ToDecimal(x).Equal(types.ToDecimal(a))
			default:
				eq = types.ToFloat(x) == types.ToFloat(a)
			}
			if eq {
				return types.NewInt(int64(i + 1)), nil
			}
		}
		return types.NewInt(0), nil
	}
}

// fnElt is ELT(n, s1, s2, ...): the n-th string, NULL when n is out of range.
func fnElt(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	n := intArg(args[0])
	if n < 1 || n >= int64(len(args)) {
		return types.Null, nil
	}
	v := args[n]
	if v.K == types.KindNull || v.K == types.KindString || v.K == types.KindBytes {
		return v, nil
	}
	return types.NewString(types.ToString(v)), nil
}

// fnFindInSet is FIND_IN_SET(s, list): the 1-based position of s among list's comma-separated
// elements under the collation, 0 when absent or when s contains a comma.
func fnFindInSet(coll *types.Collation) Func {
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		s, list := types.ToString(args[0]), types.ToString(args[1])
		if list == "" || strings.IndexByte(s, ',') >= 0 {
			return types.NewInt(0), nil
		}
		c := coll
		if anyBin(args) {
			c = nil
		}
		pos := int64(1)
		for {
			el, rest, more := strings.Cut(list, ",")
			if c.Compare(el, s) == 0 {
				return types.NewInt(pos), nil
			}
			if !more {
				return types.NewInt(0), nil
			}
			list = rest
			pos++
		}
	}
}

// fnMakeSet is MAKE_SET(bits, s1, s2, ...): the strings whose bit is set, comma-separated (NULL
// strings are skipped).
func fnMakeSet(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	b := toBits(args[0])
	var parts []string
	for i, a := range args[1:] {
		if i >= 64 {
			break
		}
		if b&(1<<uint(i)) != 0 && a.K != types.KindNull {
			parts = append(parts, types.ToString(a))
		}
	}
	return strVal(strings.Join(parts, ","), anyBin(args[1:])), nil
}

// toBits converts a number to its 64-bit pattern (negative values in two's complement).
func toBits(v types.Value) uint64 {
	u, _ := types.ToUint(v)
	return u
}

// fnExportSet is EXPORT_SET(bits, on, off[, separator[, number_of_bits]]).
func fnExportSet(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	b := toBits(args[0])
	on, off := types.ToString(args[1]), types.ToString(args[2])
	sep := ","
	if len(args) > 3 {
		sep = types.ToString(args[3])
	}
	n := int64(64)
	if len(args) > 4 {
		n = intArg(args[4])
		if n < 0 || n > 64 {
			n = 64
		}
	}
	var sb strings.Builder
	for i := int64(0); i < n; i++ {
		if i > 0 {
			sb.WriteString(sep)
		}
		if b&(1<<uint(i)) != 0 {
			sb.WriteString(on)
		} else {
			sb.WriteString(off)
		}
	}
	return strVal(sb.String(), anyBin(args[1:])), nil
}

// ---- INSERT, SUBSTRING_INDEX, SOUNDEX, QUOTE, TRIM ----

// fnInsert is INSERT(s, pos, len, new).
func fnInsert(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	bin := anyBin(args)
	c := chars{types.ToString(args[0]), bin}
	pos, l := intArg(args[1]), intArg(args[2])
	n := int64(c.len())
	if pos < 1 || pos > n {
		return strVal(c.s, bin), nil
	}
	pos--
	if l < 0 || l > n-pos {
		l = n - pos
	}
	a, b := c.offset(int(pos)), c.offset(int(pos+l))
	return strVal(c.s[:a]+types.ToString(args[3])+c.s[b:], bin), nil
}

// fnSubstringIndex is SUBSTRING_INDEX(s, delim, count); delim matches case-sensitively, its
// occurrences counted from the left without overlaps (a negative count picks the matching one
// from the end of that list), and count is taken as a 32-bit integer, as in MySQL.
func fnSubstringIndex(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	bin := anyBin(args)
	s, d := types.ToString(args[0]), types.ToString(args[1])
	n := int64(int32(intArg(args[2])))
	if n == 0 || d == "" || s == "" {
		return strVal("", bin), nil
	}
	var at []int
	for off := 0; ; {
		i := strings.Index(s[off:], d)
		if i < 0 {
			break
		}
		at = append(at, off+i)
		off += i + len(d)
	}
	if n > 0 {
		if n > int64(len(at)) {
			return strVal(s, bin), nil
		}
		return strVal(s[:at[n-1]], bin), nil
	}
	k := int64(len(at)) + n
	if k < 0 {
		return strVal(s, bin), nil
	}
	return strVal(s[at[k]+len(d):], bin), nil
}

// soundexMap gives the Soundex digit of A..Z ('0' for vowels and H, W, Y).
const soundexMap = "01230120022455012623010202"

func soundexCode(r rune) byte {
	if r >= 'a' && r <= 'z' {
		r -= 'a' - 'A'
	}
	if r < 'A' || r > 'Z' {
		return '0' // letters outside A-Z count as vowels
	}
	return soundexMap[r-'A']
}

// fnSoundex is MySQL's SOUNDEX: the first letter, then the codes of the following letters with
// vowels dropped and repeats collapsed, not cut to four characters but padded to at least four.
func fnSoundex(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull {
		return types.Null, nil
	}
	s := types.ToString(a)
	var out []byte
	var last byte
	n := 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		if n == 0 {
			if r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			out = utf8.AppendRune(out, r)
			last = soundexCode(r)
			n = 1
			continue
		}
		c := soundexCode(r)
		if c != '0' && c != last {
			out = append(out, c)
			last = c
			n++
		}
	}
	if n == 0 {
		return strVal("", a.K == types.KindBytes), nil
	}
	for ; n < 4; n++ {
		out = append(out, '0')
	}
	return strVal(string(out), a.K == types.KindBytes), nil
}

// fnQuote is QUOTE: a single-quoted SQL literal; NULL gives the word NULL.
func fnQuote(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K == types.KindNull {
		return types.NewString("NULL"), nil
	}
	s := types.ToString(a)
	b := make([]byte, 0, len(s)+2)
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '\'':
			b = append(b, '\\', c)
		case 0:
			b = append(b, '\\', '0')
		case 032:
			b = append(b, '\\', 'Z')
		default:
			b = append(b, c)
		}
	}
	b = append(b, '\'')
	return strVal(string(b), a.K == types.KindBytes), nil
}

// TrimFunc is TRIM([BOTH|LEADING|TRAILING] remstr FROM s) with arguments (s, remstr): every
// repetition of remstr is removed from the chosen ends, comparing bytes.
func TrimFunc(leading, trailing bool) Func {
	return func(args []types.Value) (types.Value, error) {
		if anyNull(args) {
			return types.Null, nil
		}
		s, r := types.ToString(args[0]), types.ToString(args[1])
		bin := anyBin(args)
		if r == "" {
			return strVal(s, bin), nil
		}
		if leading {
			for strings.HasPrefix(s, r) {
				s = s[len(r):]
			}
		}
		if trailing {
			for strings.HasSuffix(s, r) {
				s = s[:len(s)-len(r)]
			}
		}
		return strVal(s, bin), nil
	}
}

// ---- base64 ----

// fnToBase64 encodes with a newline after every 76 output characters, as MySQL does.
func fnToBase64(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	enc := base64.StdEncoding.EncodeToString([]byte(types.ToString(args[0])))
	if len(enc) <= 76 {
		return types.NewString(enc), nil
	}
	var sb strings.Builder
	for len(enc) > 76 {
		sb.WriteString(enc[:76])
		sb.WriteByte('\n')
		enc = enc[76:]
	}
	sb.WriteString(enc)
	return types.NewString(sb.String()), nil
}

// fnFromBase64 decodes, ignoring blanks and line breaks; malformed input gives NULL.
func fnFromBase64(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, types.ToString(args[0]))
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return types.Null, nil
	}
	return types.NewBytes(string(b)), nil
}

func fnBitLength(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	return types.NewInt(8 * int64(len(types.ToString(args[0])))), nil
}

// fnChar is CHAR(n, ...) without USING: each integer as its big-endian bytes without leading
// zero bytes (at most four), NULLs skipped; a binary string.
func fnChar(args []types.Value) (types.Value, error) {
	b := make([]byte, 0, len(args))
	for _, a := range args {
		if a.K == types.KindNull {
			continue
		}
		n := uint32(intArg(a))
		switch {
		case n&0xFF000000 != 0:
			b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		case n&0xFF0000 != 0:
			b = append(b, byte(n>>16), byte(n>>8), byte(n))
		case n&0xFF00 != 0:
			b = append(b, byte(n>>8), byte(n))
		default:
			b = append(b, byte(n))
		}
	}
	return types.NewBytes(string(b)), nil
}

// ---- FORMAT ----

type numLocale struct{ point, sep string }

// formatLocales holds the number formatting of MySQL's locales (lc_time_names values): decimal
// point and thousands separator (empty: no grouping). Groups are always three digits.
var formatLocales = func() map[string]numLocale {
	m := map[string]numLocale{}
	add := func(point, sep string, names string) {
		for _, n := range strings.Fields(names) {
			m[strings.ToLower(n)] = numLocale{point, sep}
		}
	}
	add(".", ",", `en_US en_GB en_AU en_CA en_IN en_NZ en_PH en_ZA en_ZW ja_JP ar_AE ar_BH ar_JO
		ar_SY gu_IN he_IL hi_IN ko_KR ms_MY ta_IN te_IN th_TH ur_PK zh_CN zh_TW zh_HK ar_DZ ar_EG
		ar_IN ar_IQ ar_KW ar_LB ar_LY ar_MA ar_OM ar_QA ar_SD ar_TN ar_YE es_DO es_GT es_HN es_MX
		es_NI es_PA es_PE es_PR es_SV es_US`)
	add(".", "", "ar_SA sr_RS")
	add(",", ".", `de_DE be_BY da_DK es_ES fo_FO hu_HU id_ID is_IS lt_LT mn_MN nb_NO ro_RO ru_UA
		sq_AL tr_TR uk_UA vi_VN de_BE de_LU es_AR es_BO es_CL es_CO es_EC es_PY es_UY es_VE fr_BE
		nl_BE no_NO el_GR`)
	add(",", " ", "sv_SE cs_CZ et_EE fi_FI lv_LV mk_MK ru_RU sk_SK sl_SI es_CR fr_CA sv_FI")
	add(",", "", "fr_FR bg_BG ca_ES de_AT eu_ES gl_ES hr_HR nl_NL pl_PL pt_BR pt_PT fr_CH fr_LU it_IT")
	add(",", "'", "it_CH rm_CH")
	add(".", "'", "de_CH")
	return m
}()

// fnFormat is FORMAT(x, d[, locale]): x rounded to d decimals (0..30) with thousands grouping.
func fnFormat(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull || args[1].K == types.KindNull {
		return types.Null, nil
	}
	d := min(max(intArg(args[1]), 0), 30)
	loc := formatLocales["en_us"]
	var warn *sqlerr.Error
	if len(args) > 2 {
		name := "NULL"
		if args[2].K != types.KindNull {
			name = types.ToString(args[2])
		}
		l, ok := formatLocales[strings.ToLower(name)]
		if ok {
			loc = l
		} else {
			warn = sqlerr.New(sqlerr.ErrUnknownLocale, "Unknown locale: '%s'", name)
		}
	}
	var digits string
	switch x := args[0]; x.K {
	case types.KindInt, types.KindUint, types.KindDecimal:
		digits = types.ToDecimal(x).Round(int32(d)).StringFixed(int32(d))
	default:
		f := types.ToFloat(x)
		digits = strconv.FormatFloat(types.RoundFloat(f, int(d)), 'f', int(d), 64)
	}
	out := groupDigits(digits, loc)
	if warn != nil {
		return warnResult(types.NewString(out), warn.Code, "%s", warn.Message)
	}
	return types.NewString(out), nil
}

// groupDigits inserts the locale's separators into a plain decimal number.
func groupDigits(s string, loc numLocale) string {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := 0; i < len(intPart); i++ {
		if i > 0 && loc.sep != "" && (len(intPart)-i)%3 == 0 {
			b.WriteString(loc.sep)
		}
		b.WriteByte(intPart[i])
	}
	if hasFrac {
		b.WriteString(loc.point)
		b.WriteString(frac)
	}
	return b.String()
}

// ---- network addresses ----

// fnInetAton is INET_ATON: dotted IPv4 to a number; short forms as MySQL ('127.1' is
// 127.0.0.1); anything else NULL.
func fnInetAton(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	s := types.ToString(args[0])
	var result, part uint64
	dots := 0
	c := byte('.')
	for i := 0; i < len(s); i++ {
		c = s[i]
		switch {
		case c >= '0' && c <= '9':
			part = part*10 + uint64(c-'0')
			if part > 255 {
				return types.Null, nil
			}
		case c == '.':
			dots++
			result = result<<8 + part
			part = 0
		default:
			return types.Null, nil
		}
	}
	if c == '.' || dots > 3 {
		return types.Null, nil
	}
	switch dots {
	case 1:
		result <<= 16
	case 2:
		result <<= 8
	}
	return types.NewUint(result<<8 + part), nil
}

func fnInetNtoa(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	var n int64
	switch a := args[0]; a.K {
	case types.KindUint:
		if a.U() > math.MaxUint32 {
			return types.Null, nil
		}
		n = a.I
	default:
		n = intArg(a)
	}
	if n < 0 || n > math.MaxUint32 {
		return types.Null, nil
	}
	return types.NewString(strconv.Itoa(int(n>>24)) + "." + strconv.Itoa(int(n>>16&255)) + "." +
		strconv.Itoa(int(n>>8&255)) + "." + strconv.Itoa(int(n&255))), nil
}

// parseIPv4 accepts exactly four dot-separated decimal parts of 1-3 digits each, 0..255.
func parseIPv4(s string) ([4]byte, bool) {
	var ip [4]byte
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return ip, false
	}
	for i, p := range parts {
		if p == "" || len(p) > 3 {
			return ip, false
		}
		n := 0
		for j := 0; j < len(p); j++ {
			if p[j] < '0' || p[j] > '9' {
				return ip, false
			}
			n = n*10 + int(p[j]-'0')
		}
		if n > 255 {
			return ip, false
		}
		ip[i] = byte(n)
	}
	return ip, true
}

// parseIPv6 accepts IPv6 text (with an optional trailing dotted IPv4), no zone.
func parseIPv6(s string) ([16]byte, bool) {
	if !strings.Contains(s, ":") || strings.ContainsAny(s, "% \t") {
		return [16]byte{}, false
	}
	if i := strings.LastIndexByte(s, ':'); strings.Contains(s[i+1:], ".") {
		v4, ok := parseIPv4(s[i+1:])
		if !ok {
			return [16]byte{}, false
		}
		s = s[:i+1] + strconv.FormatInt(int64(v4[0])<<8|int64(v4[1]), 16) + ":" + strconv.FormatInt(int64(v4[2])<<8|int64(v4[3]), 16)
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return [16]byte{}, false
	}
	return a.As16(), true
}

func fnInet6Aton(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	s := types.ToString(args[0])
	if v4, ok := parseIPv4(s); ok {
		return types.NewBytes(string(v4[:])), nil
	}
	if v6, ok := parseIPv6(s); ok {
		return types.NewBytes(string(v6[:])), nil
	}
	return warnResult(types.Null, sqlerr.ErrWrongValueForType, "Incorrect string value: '%s' for function inet6_aton", s)
}

// fnInet6Ntoa formats a 4- or 16-byte binary address as MySQL does: the longest run of zero
// groups (even a single one) becomes ::, IPv4-compatible and IPv4-mapped addresses end dotted.
func fnInet6Ntoa(args []types.Value) (types.Value, error) {
	a := args[0]
	if a.K != types.KindBytes {
		return types.Null, nil
	}
	b := []byte(a.S)
	switch len(b) {
	case 4:
		return types.NewString(strconv.Itoa(int(b[0])) + "." + strconv.Itoa(int(b[1])) + "." + strconv.Itoa(int(b[2])) + "." + strconv.Itoa(int(b[3]))), nil
	case 16:
	default:
		return types.Null, nil
	}
	var w [8]int
	for i := range w {
		w[i] = int(b[2*i])<<8 | int(b[2*i+1])
	}
	gapPos, gapLen := -1, 0
	for i := 0; i < 8; {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && w[j] == 0 {
			j++
		}
		if j-i > gapLen {
			gapPos, gapLen = i, j-i
		}
		i = j
	}
	v4 := func() string {
		return strconv.Itoa(int(b[12])) + "." + strconv.Itoa(int(b[13])) + "." + strconv.Itoa(int(b[14])) + "." + strconv.Itoa(int(b[15]))
	}
	if gapPos == 0 && gapLen == 6 {
		return types.NewString("::" + v4()), nil
	}
	if gapPos == 0 && gapLen == 5 && w[5] == 0xffff {
		return types.NewString("::ffff:" + v4()), nil
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == gapPos {
			if i == 0 {
				sb.WriteByte(':')
			}
			sb.WriteByte(':')
			i += gapLen - 1
			continue
		}
		sb.WriteString(strconv.FormatInt(int64(w[i]), 16))
		if i < 7 {
			sb.WriteByte(':')
		}
	}
	return types.NewString(sb.String()), nil
}

func boolInt(b bool) types.Value {
	if b {
		return types.NewInt(1)
	}
	return types.NewInt(0)
}

func fnIsIPv4(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.NewInt(0), nil
	}
	_, ok := parseIPv4(types.ToString(args[0]))
	return boolInt(ok), nil
}

func fnIsIPv6(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.NewInt(0), nil
	}
	_, ok := parseIPv6(types.ToString(args[0]))
	return boolInt(ok), nil
}

// fnIsIPv4Compat is IS_IPV4_COMPAT (::a.b.c.d) or, mapped, IS_IPV4_MAPPED (::ffff:a.b.c.d) of a
// 16-byte binary address.
func fnIsIPv4Compat(mapped bool) Func {
	return func(args []types.Value) (types.Value, error) {
		a := args[0]
		if a.K != types.KindBytes || len(a.S) != 16 {
			return types.NewInt(0), nil
		}
		for i := 0; i < 10; i++ {
			if a.S[i] != 0 {
				return types.NewInt(0), nil
			}
		}
		if mapped {
			return boolInt(a.S[10] == 0xff && a.S[11] == 0xff), nil
		}
		// IN6_IS_ADDR_V4COMPAT: :: and ::1 are not IPv4-compatible.
		v4 := uint32(a.S[12])<<24 | uint32(a.S[13])<<16 | uint32(a.S[14])<<8 | uint32(a.S[15])
		return boolInt(a.S[10] == 0 && a.S[11] == 0 && v4 > 1), nil
	}
}

// ---- UUIDs ----

// parseUUID accepts 32 hex digits, optionally in 8-4-4-4-12 groups and optionally in braces.
func parseUUID(s string) ([]byte, bool) {
	switch len(s) {
	case 32:
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return nil, false
		}
		s = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	case 38:
		if s[0] != '{' || s[37] != '}' {
			return nil, false
		}
		return parseUUID(s[1:37])
	default:
		return nil, false
	}
	b, err := hex.DecodeString(s)
	return b, err == nil
}

func fnIsUUID(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	_, ok := parseUUID(types.ToString(args[0]))
	return boolInt(ok), nil
}

// fnUUIDToBin is UUID_TO_BIN(uuid[, swap]): swap moves the time-high group first.
func fnUUIDToBin(args []types.Value) (types.Value, error) {
	if anyNull(args[:1]) {
		return types.Null, nil
	}
	s := types.ToString(args[0])
	b, ok := parseUUID(s)
	if !ok {
		return types.Null, sqlerr.New(sqlerr.ErrWrongValueForType, "Incorrect string value: '%s' for function uuid_to_bin", s)
	}
	if len(args) > 1 && args[1].K != types.KindNull && intArg(args[1]) != 0 {
		b = append(append(append([]byte{}, b[6:8]...), b[4:6]...), append(append([]byte{}, b[0:4]...), b[8:]...)...)
	}
	return types.NewBytes(string(b)), nil
}

func fnBinToUUID(args []types.Value) (types.Value, error) {
	if anyNull(args[:1]) {
		return types.Null, nil
	}
	b := []byte(types.ToString(args[0]))
	if len(b) != 16 {
		return types.Null, sqlerr.New(sqlerr.ErrWrongValueForType, "Incorrect string value: '%s' for function bin_to_uuid", hexText(b))
	}
	if len(args) > 1 && args[1].K != types.KindNull && intArg(args[1]) != 0 {
		b = append(append(append([]byte{}, b[4:8]...), b[2:4]...), append(append([]byte{}, b[0:2]...), b[8:]...)...)
	}
	h := hex.EncodeToString(b)
	return types.NewString(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]), nil
}

func hexText(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

// ---- numbers ----

func fnBitCount(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	return types.NewInt(int64(bits.OnesCount64(toBits(args[0])))), nil
}

// fnAtan is ATAN(x), ATAN(y, x) and ATAN2(y, x).
func fnAtan(args []types.Value) (types.Value, error) {
	if anyNull(args) {
		return types.Null, nil
	}
	if len(args) == 1 {
		return types.NewFloat(math.Atan(types.ToFloat(args[0]))), nil
	}
	return types.NewFloat(math.Atan2(types.ToFloat(args[0]), types.ToFloat(args[1]))), nil
}

func fnCot(args []types.Value) (types.Value, error) {
	if args[0].K == types.KindNull {
		return types.Null, nil
	}
	t := math.Tan(types.ToFloat(args[0]))
	if t == 0 {
		return types.Null, types.RangeErr("DOUBLE", "cot(", args[0], ")")
	}
	return types.NewFloat(1 / t), nil
}

// fnInterval is INTERVAL(n, n1, n2, ...): the index of the last element ≤ n, assuming a sorted
// list: short lists are scanned for the first element > n, longer ones binary-searched as in
// MySQL; -1 when n is NULL. Exact numbers compare as
// decimals, anything else as doubles; a NULL element counts as 0.
func fnInterval(args []types.Value) (types.Value, error) {
	x := args[0]
	if x.K == types.KindNull {
		return types.NewInt(-1), nil
	}
	list := args[1:]
	exact := func(v types.Value) bool {
		return v.K == types.KindInt || v.K == types.KindUint || v.K == types.KindDecimal
	}
	xExact := exact(x)
	var xd decimal.Decimal
	if xExact {
		xd = types.ToDecimal(x)
	}
	xf := types.ToFloat(x)
	// le reports list[i] <= x.
	le := func(i int) bool {
		e := list[i]
		if e.K == types.KindNull {
			e = types.NewInt(0)
		}
		if xExact && exact(e) {
			return types.ToDecimal(e).Cmp(xd) <= 0
		}
		return types.ToFloat(e) <= xf
	}
	if len(list) <= 8 || anyNull(list) {
		// MySQL scans short lists (and lists with NULLs) in order.
		for i := range list {
			if !le(i) {
				return types.NewInt(int64(i)), nil
			}
		}
		return types.NewInt(int64(len(list))), nil
	}
	start, end := 0, len(list)-1
	for start != end {
		mid := (start + end + 1) / 2
		if le(mid) {
			start = mid
		} else {
			end = mid - 1
		}
	}
	if !le(start) {
		return types.NewInt(0), nil
	}
	return types.NewInt(int64(start + 1)), nil
}
