package types

import (
	"math/rand"
	"testing"
)

func TestPackTime(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	prev := int64(-1)
	_ = prev
	for i := 0; i < 10000; i++ {
		y, mo := r.Intn(10000), 1+r.Intn(12)
		d := 1 + r.Intn(DaysInMonth(y, mo))
		h, mi, s, us := r.Intn(24), r.Intn(60), r.Intn(60), r.Intn(1000000)
		p := PackTime(y, mo, d, h, mi, s, us)
		y2, mo2, d2, h2, mi2, s2, us2 := UnpackTime(p)
		if y2 != y || mo2 != mo || d2 != d || h2 != h || mi2 != mi || s2 != s || us2 != us {
			t.Fatalf("round trip %d-%d-%d %d:%d:%d.%d", y, mo, d, h, mi, s, us)
		}
		// Order: compare with a second random datetime.
		y3, mo3 := r.Intn(10000), 1+r.Intn(12)
		d3 := 1 + r.Intn(DaysInMonth(y3, mo3))
		p3 := PackTime(y3, mo3, d3, h, mi, s, us)
		want := CmpInt(int64(y*10000+mo*100+d), int64(y3*10000+mo3*100+d3))
		if got := CmpInt(p, p3); got != want {
			t.Fatalf("order %d vs %d", p, p3)
		}
	}
	if PackTime(0, 0, 0, 0, 0, 0, 0) != 0 {
		t.Error("zero date must pack to 0")
	}
}

func TestParseDatetime(t *testing.T) {
	cases := []struct {
		in   string
		fsp  int
		want string // "" = error
	}{
		{"2024-01-02 03:04:05", 0, "2024-01-02 03:04:05"},
		{"2024-01-02 03:04:05.123456", 6, "2024-01-02 03:04:05.123456"},
		{"2024-01-02 03:04:05.123456", 3, "2024-01-02 03:04:05.123"},
		{"2024-01-02 03:04:05.1235", 3, "2024-01-02 03:04:05.124"},
		{"2024-12-31 23:59:59.9999999", 6, "2025-01-01 00:00:00.000000"},
		{"2024-12-31 23:59:59.5", 0, "2025-01-01 00:00:00"},
		{"2024-01-02T03:04:05", 0, "2024-01-02 03:04:05"},
		{"2024/1/2 3:4:5", 0, "2024-01-02 03:04:05"},
		{"2024-01-02", 0, "2024-01-02 00:00:00"},
		{"2024-01-02 10", 0, "2024-01-02 10:00:00"},
		{"2024-01-02 10:20", 0, "2024-01-02 10:20:00"},
		{"  2024-01-02 03:04:05  ", 0, "2024-01-02 03:04:05"},
		{"20240102030405", 0, "2024-01-02 03:04:05"},
		{"20240102030405.5", 1, "2024-01-02 03:04:05.5"},
		{"240102030405", 0, "2024-01-02 03:04:05"},
		{"20240102", 0, "2024-01-02 00:00:00"},
		{"240102", 0, "2024-01-02 00:00:00"},
		{"991231", 0, "1999-12-31 00:00:00"},
		{"70-01-01", 0, "1970-01-01 00:00:00"},
		{"69-01-01", 0, "2069-01-01 00:00:00"},
		{"0000-00-00", 0, "0000-00-00 00:00:00"},
		{"0000-00-00 00:00:00", 0, "0000-00-00 00:00:00"},
		{"2024-02-29", 0, "2024-02-29 00:00:00"},
		{"2023-02-29", 0, ""},
		{"2024-13-01", 0, ""},
		{"2024-00-01", 0, ""},
		{"2024-01-32", 0, ""},
		{"2024-01-02 24:00:00", 0, ""},
		{"2024-01-02 10:60:00", 0, ""},
		{"abc", 0, ""},
		{"", 0, ""},
		{"2024-01-02 03:04:05 x", 0, ""},
		{"2024-01", 0, ""},
		{"12345", 0, ""},
	}
	for _, c := range cases {
		p, err := ParseDatetime(c.in, c.fsp)
		if c.want == "" {
			if err == nil {
				t.Errorf("ParseDatetime(%q) = %s, want error", c.in, NewDatetime(p, c.fsp))
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDatetime(%q): %v", c.in, err)
			continue
		}
		if got := NewDatetime(p, c.fsp).String(); got != c.want {
			t.Errorf("ParseDatetime(%q, %d) = %s, want %s", c.in, c.fsp, got, c.want)
		}
	}
	if p, err := ParseDate("2024-05-06 23:59:59.999"); err != nil || NewDate(p).String() != "2024-05-06" {
		t.Errorf("ParseDate truncates: %v %v", NewDate(p), err)
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		fsp  int
		want string
		err  bool
	}{
		{"12:34:56", 0, "12:34:56", false},
		{"-12:34:56", 0, "-12:34:56", false},
		{"838:59:59", 0, "838:59:59", false},
		{"839:00:00", 0, "838:59:59", true},
		{"-900:00:00", 0, "-838:59:59", true},
		{"12:34", 0, "12:34:00", false},
		{"1 12:00:00", 0, "36:00:00", false},
		{"2 3", 0, "51:00:00", false},
		{"123456", 0, "12:34:56", false},
		{"3456", 0, "00:34:56", false},
		{"56", 0, "00:00:56", false},
		{"12:34:56.789", 2, "12:34:56.79", false},
		{"12:34:56.5", 0, "12:34:57", false},
		{"2024-01-02 10:20:30", 0, "10:20:30", false},
		{"20240102102030", 0, "10:20:30", false},
		{"12:60:00", 0, "", true},
		{"126000", 0, "", true},
		{"abc", 0, "", true},
		{"", 0, "", true},
	}
	for _, c := range cases {
		us, err := ParseDuration(c.in, c.fsp)
		if (err != nil) != c.err {
			t.Errorf("ParseDuration(%q) err = %v", c.in, err)
		}
		if c.want != "" {
			if got := NewDuration(us, c.fsp).String(); got != c.want {
				t.Errorf("ParseDuration(%q) = %s, want %s", c.in, got, c.want)
			}
		}
	}
}

func TestNumberToDatetime(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{20240102, "2024-01-02 00:00:00"},
		{240102, "2024-01-02 00:00:00"},
		{700101, "1970-01-01 00:00:00"},
		{20240102030405, "2024-01-02 03:04:05"},
		{240102030405, "2024-01-02 03:04:05"},
		{0, "0000-00-00 00:00:00"},
		{100, ""},
		{20241301, ""},
		{99999999999999, ""},
	}
	for _, c := range cases {
		p, _, err := numberToDatetime(c.n, 0, 6)
		if c.want == "" {
			if err == nil {
				t.Errorf("numberToDatetime(%d) accepted", c.n)
			}
			continue
		}
		if err != nil || NewDatetime(p, 0).String() != c.want {
			t.Errorf("numberToDatetime(%d) = %s, %v; want %s", c.n, NewDatetime(p, 0), err, c.want)
		}
	}
}

func TestCalendar(t *testing.T) {
	if got := CalcDaynr(2007, 10, 7); got != 733321 {
		t.Errorf("TO_DAYS(2007-10-07) = %d", got)
	}
	if got := CalcDaynr(2008, 10, 7); got != 733687 {
		t.Errorf("TO_DAYS(2008-10-07) = %d", got)
	}
	// 2024-01-01 is a Monday.
	if got := CalcWeekday(CalcDaynr(2024, 1, 1), false); got != 0 {
		t.Errorf("weekday = %d", got)
	}
	weeks := []struct {
		y, m, d, beh, week, year int
	}{
		{2008, 2, 20, WeekFirstWeekday, 7, 2008},             // WEEK('2008-02-20') mode 0
		{2008, 2, 20, WeekMondayFirst, 8, 2008},              // mode 1
		{2008, 12, 31, WeekMondayFirst | WeekYear, 1, 2009},  // %v / %x
		{2000, 1, 1, WeekFirstWeekday, 0, 2000},              // mode 0
		{2000, 1, 1, WeekYear | WeekFirstWeekday, 52, 1999},  // %V / %X
		{2021, 1, 3, WeekMondayFirst | WeekYear, 53, 2020},   // ISO week 53 of 2020
		{2024, 12, 30, WeekMondayFirst | WeekYear, 1, 2025},  // ISO
		{2024, 6, 15, WeekFirstWeekday | WeekYear, 23, 2024}, // %V
	}
	for _, w := range weeks {
		week, year := CalcWeek(w.y, w.m, w.d, w.beh)
		if week != w.week || year != w.year {
			t.Errorf("calcWeek(%d-%d-%d, %d) = %d/%d, want %d/%d", w.y, w.m, w.d, w.beh, week, year, w.week, w.year)
		}
	}
}
