package types

import (
	"errors"
	"strconv"
	"time"
)

// PackTime packs a date and time into MySQL's packed datetime layout:
// ((((year*13+month)<<5|day)<<17) | (hour<<12|min<<6|sec)) << 24 | micro.
// For valid dates (and the zero date) the packed values order like the datetimes they encode.
func PackTime(year, month, day, hour, min, sec, micro int) int64 {
	ymd := int64(year*13+month)<<5 | int64(day)
	hms := int64(hour<<12 | min<<6 | sec)
	return (ymd<<17|hms)<<24 | int64(micro)
}

// UnpackTime is the inverse of PackTime.
func UnpackTime(p int64) (year, month, day, hour, min, sec, micro int) {
	micro = int(p & (1<<24 - 1))
	p >>= 24
	hms := p & (1<<17 - 1)
	ymd := p >> 17
	day = int(ymd & 31)
	ym := ymd >> 5
	year = int(ym / 13)
	month = int(ym % 13)
	sec = int(hms & 63)
	min = int(hms >> 6 & 63)
	hour = int(hms >> 12)
	return
}

const (
	MaxDurationMicros = (838*3600 + 59*60 + 59) * 1000000
	MicrosPerSec      = 1000000
)

var (
	errBadTime       = errors.New("invalid date/time value")
	ErrDurationRange = errors.New("time value out of range")
)

var pow10i = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func DaysInMonth(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// validDate accepts real calendar dates and the all-zero date; dates with only some zero parts are
// rejected as MySQL 8's default NO_ZERO_IN_DATE does.
func validDate(y, m, d int) bool {
	if y == 0 && m == 0 && d == 0 {
		return true
	}
	return y >= 0 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= DaysInMonth(y, m)
}

func validTime(h, mi, s, us int) bool {
	return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59 && us >= 0 && us < MicrosPerSec
}

// roundMicros rounds a microsecond count (0..999999) to fsp digits, half up; the result may be
// 1000000, which the caller carries into the seconds.
func roundMicros(us, fsp int) int {
	if fsp >= 6 {
		return us
	}
	unit := int(pow10i[6-fsp])
	return (us + unit/2) / unit * unit
}

// packCarry packs a datetime whose microseconds may have rounded up to a whole second.
func packCarry(y, mo, d, h, mi, s, us int) (int64, error) {
	if us < MicrosPerSec {
		return PackTime(y, mo, d, h, mi, s, us), nil
	}
	if y == 0 && mo == 0 && d == 0 {
		// The zero date has no calendar to carry into: keep it as MySQL does (time part only).
		us -= MicrosPerSec
		s++
		if s == 60 {
			s, mi = 0, mi+1
		}
		if mi == 60 {
			mi, h = 0, h+1
		}
		if h == 24 {
			return 0, errBadTime
		}
		return PackTime(0, 0, 0, h, mi, s, us), nil
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s+1, 0, time.UTC)
	if t.Year() > 9999 {
		return 0, errBadTime
	}
	return PackTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), us-MicrosPerSec), nil
}

func normFsp(fsp int) int {
	if fsp < 0 || fsp > 6 {
		return 6
	}
	return fsp
}

// ParseDatetime parses s with MySQL's datetime rules and rounds the fraction to fsp digits (fsp
// outside 0..6 keeps all 6). Accepted: 'YYYY-MM-DD[( |T)HH[:MM[:SS[.ffffff]]]]' with any
// punctuation as delimiter, 2-digit years (70-99 → 19xx, 00-69 → 20xx), and the undelimited
// 'YYYYMMDD[HHMMSS[.ffffff]]' / 'YYMMDD[HHMMSS]' forms. The zero date is allowed.
func ParseDatetime(s string, fsp int) (int64, error) {
	p, _, err := parseDatetime(s, normFsp(fsp))
	return p, err
}

// ParseDate parses s like ParseDatetime and drops any time part (truncating, as MySQL does when
// storing into a DATE column).
func ParseDate(s string) (int64, error) {
	p, _, err := parseDatetime(s, 6)
	if err != nil {
		return 0, err
	}
	return p &^ (1<<41 - 1), nil
}

func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func IsPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !IsDigit(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')
}

func TrimSpaces(s string) string {
	i, j := 0, len(s)
	for i < j && IsSpace(s[i]) {
		i++
	}
	for j > i && IsSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func atoiDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
		if n > 1<<40 {
			return 1 << 40
		}
	}
	return n
}

// fracMicros reads up to 6 fraction digits as microseconds, rounding on the 7th.
func fracMicros(f string) int {
	us := 0
	for i := 0; i < 6; i++ {
		us *= 10
		if i < len(f) {
			us += int(f[i] - '0')
		}
	}
	if len(f) > 6 && f[6] >= '5' {
		us++
	}
	return us
}

func TwoDigitYear(y int) int {
	if y < 70 {
		return y + 2000
	}
	return y + 1900
}

// parseDatetime returns the packed value and whether s had a time part.
func parseDatetime(s string, fsp int) (int64, bool, error) {
	return ParseDatetimeMode(s, fsp, false)
}

// ParseDatetimeMode parses a datetime; fuzzy accepts zero months and days ('2006-06-00'), as
// MySQL's date functions do.
func ParseDatetimeMode(s string, fsp int, fuzzy bool) (int64, bool, error) {
	s = TrimSpaces(s)
	if s == "" {
		return 0, false, errBadTime
	}
	n := 0
	for n < len(s) && IsDigit(s[n]) {
		n++
	}
	if n == 0 {
		return 0, false, errBadTime
	}
	var y, mo, d, h, mi, sec, us int
	hasTime := false
	if n == len(s) || (s[n] == '.' && n >= 12) {
		// Undelimited digits.
		digits := s[:n]
		frac := ""
		if n < len(s) {
			frac = s[n+1:]
			for i := 0; i < len(frac); i++ {
				if !IsDigit(frac[i]) {
					return 0, false, errBadTime
				}
			}
		}
		yl := 2
		if n == 8 || n >= 14 {
			yl = 4
		}
		if n < yl+4 || n > 14 || (n-yl)%2 != 0 {
			return 0, false, errBadTime
		}
		y = atoiDigits(digits[:yl])
		if yl == 2 {
			y = TwoDigitYear(y)
		}
		rest := digits[yl:]
		parts := [5]int{}
		for i := 0; i < len(rest)/2; i++ {
			parts[i] = atoiDigits(rest[2*i : 2*i+2])
		}
		mo, d, h, mi, sec = parts[0], parts[1], parts[2], parts[3], parts[4]
		hasTime = len(rest) > 4
		if frac != "" {
			if len(rest) < 10 {
				return 0, false, errBadTime
			}
			us = fracMicros(frac)
		}
	} else {
		// Delimited: year, month, day, then optionally the time.
		var fields [6]int
		var flen [6]int
		i := 0
		k := 0
		for k < 6 {
			st := i
			for i < len(s) && IsDigit(s[i]) {
				i++
			}
			if i == st || i-st > 9 {
				return 0, false, errBadTime
			}
			fields[k], flen[k] = atoiDigits(s[st:i]), i-st
			k++
			if i == len(s) {
				break
			}
			if k == 3 {
				// Date/time separator: spaces or a single 'T'.
				if s[i] == 'T' {
					i++
				} else if IsSpace(s[i]) {
					for i < len(s) && IsSpace(s[i]) {
						i++
					}
				} else if s[i] == '.' || !IsPunct(s[i]) {
					return 0, false, errBadTime
				} else {
					i++
				}
				if i == len(s) {
					return 0, false, errBadTime
				}
				continue
			}
			if k == 6 {
				break
			}
			if s[i] == '.' && k >= 4 {
				break // fraction follows the seconds (or minutes)
			}
			if !IsPunct(s[i]) {
				return 0, false, errBadTime
			}
			i++
			if i == len(s) {
				return 0, false, errBadTime
			}
		}
		if k < 3 {
			return 0, false, errBadTime
		}
		if i < len(s) {
			if s[i] != '.' || k < 4 {
				return 0, false, errBadTime
			}
			i++
			st := i
			for i < len(s) && IsDigit(s[i]) {
				i++
			}
			if i != len(s) {
				return 0, false, errBadTime
			}
			us = fracMicros(s[st:])
		}
		y, mo, d, h, mi, sec = fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
		if flen[0] <= 2 {
			y = TwoDigitYear(y)
		}
		hasTime = k > 3
	}
	// us may be 1000000 when the 7th fraction digit rounded up: packCarry carries it.
	okDate := validDate(y, mo, d)
	if fuzzy && !okDate && y <= 9999 && mo <= 12 && d <= 31 && (mo == 0 || d == 0) {
		okDate = true
	}
	if !okDate || !validTime(h, mi, sec, min(us, MicrosPerSec-1)) {
		return 0, false, errBadTime
	}
	if mo == 0 || d == 0 {
		// No calendar to carry a rounded-up second into.
		return PackTime(y, mo, d, h, mi, sec, min(roundMicros(us, fsp), MicrosPerSec-1)), hasTime, nil
	}
	p, err := packCarry(y, mo, d, h, mi, sec, roundMicros(us, fsp))
	return p, hasTime, err
}

// ParseDuration parses a TIME literal: '[-][D ]HH:MM:SS[.ffffff]', 'HH:MM', 'D HH', '[-]HHMMSS',
// 'MMSS', 'SS' (each with an optional fraction) and full datetimes (their time part). Values beyond
// ±838:59:59 return errDurationRange together with the clipped value.
func ParseDuration(s string, fsp int) (int64, error) {
	return parseDuration(s, normFsp(fsp))
}

func parseDuration(s string, fsp int) (int64, error) {
	s = TrimSpaces(s)
	neg := false
	if s != "" && s[0] == '-' {
		neg = true
		s = TrimSpaces(s[1:])
	}
	if s == "" {
		return 0, errBadTime
	}
	n := 0
	for n < len(s) && IsDigit(s[n]) {
		n++
	}
	// A full datetime: keep its time part.
	if !neg && (n >= 12 && (n == len(s) || s[n] == '.') || n > 0 && n < len(s) && (s[n] == '-' || s[n] == '/')) {
		if p, _, err := parseDatetime(s, fsp); err == nil {
			_, _, _, h, mi, sec, us := UnpackTime(p)
			return (int64(h)*3600+int64(mi)*60+int64(sec))*MicrosPerSec + int64(us), nil
		}
		if n < len(s) && (s[n] == '-' || s[n] == '/') {
			return 0, errBadTime
		}
	}
	var days, h, mi, sec, us int64
	i := 0
	readNum := func() (int64, int, bool) {
		st := i
		for i < len(s) && IsDigit(s[i]) {
			i++
		}
		if i == st || i-st > 12 {
			return 0, 0, false
		}
		return int64(atoiDigits(s[st:i])), i - st, true
	}
	first, _, ok := readNum()
	if !ok {
		if s[0] != '.' {
			return 0, errBadTime
		}
	}
	switch {
	case i < len(s) && IsSpace(s[i]):
		// 'D HH[:MM[:SS]]'
		days = first
		for i < len(s) && IsSpace(s[i]) {
			i++
		}
		var ok bool
		if h, _, ok = readNum(); !ok {
			return 0, errBadTime
		}
		if i < len(s) && s[i] == ':' {
			i++
			if mi, _, ok = readNum(); !ok {
				return 0, errBadTime
			}
			if i < len(s) && s[i] == ':' {
				i++
				if sec, _, ok = readNum(); !ok {
					return 0, errBadTime
				}
			}
		}
	case i < len(s) && s[i] == ':':
		h = first
		i++
		var ok bool
		if mi, _, ok = readNum(); !ok {
			return 0, errBadTime
		}
		if i < len(s) && s[i] == ':' {
			i++
			if sec, _, ok = readNum(); !ok {
				return 0, errBadTime
			}
		}
	default:
		// [[H]HMM]SS
		sec = first % 100
		mi = first / 100 % 100
		h = first / 10000
	}
	if i < len(s) {
		if s[i] != '.' {
			return 0, errBadTime
		}
		i++
		st := i
		for i < len(s) && IsDigit(s[i]) {
			i++
		}
		if i != len(s) {
			return 0, errBadTime
		}
		us = int64(fracMicros(s[st:]))
	}
	if mi > 59 || sec > 59 {
		return 0, errBadTime
	}
	us = int64(roundMicros(int(us), fsp))
	total := (((days*24+h)*60+mi)*60+sec)*MicrosPerSec + us
	if days > 34 || h > 10000 {
		total = MaxDurationMicros + 1
	}
	if neg {
		total = -total
	}
	return ClipDuration(total)
}

func ClipDuration(us int64) (int64, error) {
	if us > MaxDurationMicros {
		return MaxDurationMicros, ErrDurationRange
	}
	if us < -MaxDurationMicros {
		return -MaxDurationMicros, ErrDurationRange
	}
	return us, nil
}

// RoundDuration rounds a TIME to fsp digits, half away from zero.
func RoundDuration(us int64, fsp int) int64 {
	if fsp >= 6 {
		return us
	}
	unit := pow10i[6-fsp]
	if us < 0 {
		return -((-us + unit/2) / unit * unit)
	}
	return (us + unit/2) / unit * unit
}

// roundDatetime rounds a packed datetime to fsp digits.
func roundDatetime(p int64, fsp int) (int64, error) {
	y, mo, d, h, mi, s, us := UnpackTime(p)
	r := roundMicros(us, fsp)
	if r == us {
		return p, nil
	}
	return packCarry(y, mo, d, h, mi, s, r)
}

// numberToDatetime interprets an integer as MySQL's number_to_datetime does: YYMMDD, YYYYMMDD,
// YYMMDDHHMMSS or YYYYMMDDHHMMSS.
func numberToDatetime(nr int64, us int, fsp int) (int64, bool, error) {
	if nr == 0 && us == 0 {
		return 0, false, nil
	}
	switch {
	case nr < 0 || nr < 101:
		return 0, false, errBadTime
	case nr <= 691231:
		nr = (nr + 20000000) * 1000000
	case nr < 700101:
		return 0, false, errBadTime
	case nr <= 991231:
		nr = (nr + 19000000) * 1000000
	case nr < 10000101:
		return 0, false, errBadTime
	case nr <= 99991231:
		nr *= 1000000
	case nr < 101000000:
		return 0, false, errBadTime
	case nr <= 691231235959:
		nr += 20000000000000
	case nr < 700101000000:
		return 0, false, errBadTime
	case nr <= 991231235959:
		nr += 19000000000000
	case nr > 99991231235959:
		return 0, false, errBadTime
	}
	hasTime := nr%1000000 != 0 || us != 0
	ymd := nr / 1000000
	hms := nr % 1000000
	y, mo, d := int(ymd/10000), int(ymd/100%100), int(ymd%100)
	h, mi, s := int(hms/10000), int(hms/100%100), int(hms%100)
	if !validDate(y, mo, d) || !validTime(h, mi, s, us) {
		return 0, false, errBadTime
	}
	p, err := packCarry(y, mo, d, h, mi, s, roundMicros(us, fsp))
	return p, hasTime, err
}

// numberToDuration interprets [-]HHMMSS(.ffffff); numbers with a date part go through
// numberToDatetime.
func numberToDuration(nr int64, us int, neg bool, fsp int) (int64, error) {
	if nr >= 10000000000 {
		p, _, err := numberToDatetime(nr, us, fsp)
		if err != nil {
			return 0, err
		}
		_, _, _, h, mi, s, us2 := UnpackTime(p)
		return (int64(h)*3600+int64(mi)*60+int64(s))*MicrosPerSec + int64(us2), nil
	}
	s, mi, h := nr%100, nr/100%100, nr/10000
	if s > 59 || mi > 59 {
		return 0, errBadTime
	}
	total := ((h*60+mi)*60+s)*MicrosPerSec + int64(roundMicros(us, fsp))
	if neg {
		total = -total
	}
	return ClipDuration(total)
}

// datetimeNumber returns YYYYMMDDhhmmss (or YYYYMMDD for dates) and the microseconds.
func datetimeNumber(p int64, dateOnly bool) (int64, int) {
	y, mo, d, h, mi, s, us := UnpackTime(p)
	n := int64(y)*10000 + int64(mo)*100 + int64(d)
	if dateOnly {
		return n, 0
	}
	return n*1000000 + int64(h)*10000 + int64(mi)*100 + int64(s), us
}

// durationNumber returns [-]HHMMSS and the (non-negative) microseconds.
func durationNumber(us int64) (n int64, frac int, neg bool) {
	if us < 0 {
		neg = true
		us = -us
	}
	secs := us / MicrosPerSec
	n = secs/3600*10000 + secs/60%60*100 + secs%60
	return n, int(us % MicrosPerSec), neg
}

// DurationParts splits a TIME into its fields.
func DurationParts(us int64) (neg bool, h, mi, s, frac int64) {
	if us < 0 {
		neg = true
		us = -us
	}
	frac = us % MicrosPerSec
	secs := us / MicrosPerSec
	return neg, secs / 3600, secs / 60 % 60, secs % 60, frac
}

func AppendPad(buf []byte, n int64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	for i := len(d); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, d...)
}

func appendFrac(buf []byte, us int, fsp int) []byte {
	if fsp <= 0 {
		return buf
	}
	if fsp > 6 {
		fsp = 6
	}
	buf = append(buf, '.')
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + us%10)
		us /= 10
	}
	return append(buf, d[:fsp]...)
}

func appendDate(buf []byte, p int64) []byte {
	y, mo, d, _, _, _, _ := UnpackTime(p)
	buf = AppendPad(buf, int64(y), 4)
	buf = append(buf, '-')
	buf = AppendPad(buf, int64(mo), 2)
	buf = append(buf, '-')
	return AppendPad(buf, int64(d), 2)
}

func AppendDatetime(buf []byte, p int64, fsp int) []byte {
	buf = appendDate(buf, p)
	_, _, _, h, mi, s, us := UnpackTime(p)
	buf = append(buf, ' ')
	buf = AppendPad(buf, int64(h), 2)
	buf = append(buf, ':')
	buf = AppendPad(buf, int64(mi), 2)
	buf = append(buf, ':')
	buf = AppendPad(buf, int64(s), 2)
	return appendFrac(buf, us, fsp)
}

func AppendDuration(buf []byte, us int64, fsp int) []byte {
	neg, h, mi, s, frac := DurationParts(us)
	if neg {
		buf = append(buf, '-')
	}
	buf = AppendPad(buf, h, 2)
	buf = append(buf, ':')
	buf = AppendPad(buf, mi, 2)
	buf = append(buf, ':')
	buf = AppendPad(buf, s, 2)
	return appendFrac(buf, int(frac), fsp)
}

// CalcDaynr is MySQL's day number (days since year 0, TO_DAYS).
func CalcDaynr(year, month, day int) int64 {
	if year == 0 && month == 0 {
		return 0
	}
	y := year
	delsum := int64(365*y + 31*(month-1) + day)
	if month <= 2 {
		y--
	} else {
		delsum -= int64(month*4+23) / 10
	}
	temp := (y/100 + 1) * 3 / 4
	return delsum + int64(y/4) - int64(temp)
}

// CalcWeekday returns 0 = Monday .. 6 = Sunday (or 0 = Sunday when sundayFirst).
func CalcWeekday(daynr int64, sundayFirst bool) int {
	add := int64(5)
	if sundayFirst {
		add = 6
	}
	return int((daynr + add) % 7)
}

func daysInYear(y int) int {
	if isLeap(y) {
		return 366
	}
	return 365
}

const (
	WeekMondayFirst  = 1
	WeekYear         = 2
	WeekFirstWeekday = 4
)

// CalcWeek is MySQL's calc_week.
func CalcWeek(y, m, d int, behaviour int) (week, year int) {
	daynr := CalcDaynr(y, m, d)
	firstDaynr := CalcDaynr(y, 1, 1)
	mondayFirst := behaviour&WeekMondayFirst != 0
	wy := behaviour&WeekYear != 0
	firstWeekday := behaviour&WeekFirstWeekday != 0
	weekday := CalcWeekday(firstDaynr, !mondayFirst)
	year = y
	if m == 1 && d <= 7-weekday {
		if !wy && ((firstWeekday && weekday != 0) || (!firstWeekday && weekday >= 4)) {
			return 0, year
		}
		wy = true
		year--
		days := daysInYear(year)
		firstDaynr -= int64(days)
		weekday = (weekday + 53*7 - days) % 7
	}
	var days int64
	if (firstWeekday && weekday != 0) || (!firstWeekday && weekday >= 4) {
		days = daynr - (firstDaynr + int64(7-weekday))
	} else {
		days = daynr - (firstDaynr - int64(weekday))
	}
	if wy && days >= 52*7 {
		weekday = (weekday + daysInYear(year)) % 7
		if (!firstWeekday && weekday < 4) || (firstWeekday && weekday == 0) {
			return 1, year + 1
		}
	}
	return int(days/7 + 1), year
}
