package sysvar

import (
	"errors"
	"slices"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		global bool
		val    types.Value
		want   string // the stored value (types.ToString), when no error
		null   bool   // the stored value is NULL
		code   uint16 // the error's code, 0: none
		warn   uint16 // the warning's code, 0: none
	}{
		{name: "no_such_variable", val: types.NewInt(1), code: sqlerr.ErrUnknownSystemVar},
		{name: "version_comment", global: true, val: types.NewString("x"), code: 1238},
		{name: "gtid_next", global: true, val: types.NewString("AUTOMATIC"), code: 1228},
		{name: "max_connections", val: types.NewInt(10), code: 1229},
		{name: "max_connections", global: true, val: types.NewInt(10), want: "10"},
		{name: "max_allowed_packet", val: types.NewInt(2048), code: sqlerr.ErrVariableIsReadonly},
		{name: "net_buffer_length", val: types.NewInt(2048), code: sqlerr.ErrVariableIsReadonly},
		{name: "max_allowed_packet", global: true, val: types.NewInt(2048), want: "2048"},
		{name: "max_allowed_packet", global: true, val: types.NewInt(1), want: "1024", warn: sqlerr.ErrTruncatedWrongValue},
		{name: "AUTOCOMMIT", val: types.NewString("off"), want: "0"},
		{name: "autocommit", val: types.NewString("True"), want: "1"},
		{name: "autocommit", val: types.NewInt(2), code: sqlerr.ErrWrongValueForVar},
		{name: "autocommit", val: types.Null, code: sqlerr.ErrWrongValueForVar},
		{name: "wait_timeout", val: types.NewInt(0), want: "1", warn: sqlerr.ErrTruncatedWrongValue},
		{name: "auto_increment_increment", val: types.NewInt(70000), want: "65535", warn: sqlerr.ErrTruncatedWrongValue},
		{name: "wait_timeout", val: types.NewString(" 60 "), want: "60"},
		{name: "wait_timeout", val: types.NewString("abc"), code: sqlerr.ErrWrongTypeForVar},
		{name: "init_connect", global: true, val: types.Null, want: ""},
		{name: "transaction_isolation", val: types.NewString("read committed"), want: "READ-COMMITTED"},
		{name: "tx_isolation", val: types.NewString("snapshot"), code: sqlerr.ErrWrongValueForVar},
		{name: "time_zone", val: types.NewString("+05:30"), want: "+05:30"},
		{name: "time_zone", val: types.NewString("system"), want: "system"},
		{name: "time_zone", val: types.NewString("Mars/Olympus"), code: sqlerr.ErrUnknownTimeZone},
		{name: "sql_mode", val: types.NewString("strict_all_tables,ansi_quotes"), want: "STRICT_ALL_TABLES,ANSI_QUOTES"},
		{name: "sql_mode", val: types.NewString("NO_SUCH_MODE"), code: sqlerr.ErrWrongValueForVar},
		{name: "collation_connection", val: types.NewString("utf8mb4_bin"), want: "utf8mb4_bin"},
		{name: "collation_connection", val: types.NewString("klingon_ci"), code: sqlerr.ErrUnknownCollation},
		{name: "character_set_client", val: types.NewString("UTF8"), want: "utf8mb3"},
		{name: "character_set_client", val: types.NewString("ebcdic"), code: sqlerr.ErrUnknownCharset},
		{name: "character_set_results", val: types.Null, null: true},
		{name: "kiln_durability", val: types.NewString("ASYNC"), want: "async"},
		{name: "kiln_durability", val: types.NewString("sometimes"), code: sqlerr.ErrWrongValueForVar},
	} {
		v, got, warn, err := Validate(tc.name, tc.global, tc.val)
		if tc.code != 0 {
			var e *sqlerr.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Errorf("SET %s = %v: error %v, want code %d", tc.name, tc.val, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("SET %s = %v: %v", tc.name, tc.val, err)
			continue
		}
		if v == nil || v != Must(v.Name) {
			t.Errorf("SET %s: variable %v", tc.name, v)
		}
		if tc.null != got.IsNull() || !tc.null && types.ToString(got) != tc.want {
			t.Errorf("SET %s = %v stores %q (null %v), want %q (null %v)", tc.name, tc.val, types.ToString(got), got.IsNull(), tc.want, tc.null)
		}
		if (warn == nil) != (tc.warn == 0) || warn != nil && warn.Code != tc.warn {
			t.Errorf("SET %s = %v: warning %v, want code %d", tc.name, tc.val, warn, tc.warn)
		}
	}
}

func TestDefinitions(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) || len(names) < 100 {
		t.Fatalf("Names: %d names, sorted %v", len(names), slices.IsSorted(names))
	}
	for _, n := range names {
		v, ok := Lookup(n)
		if !ok || v.Name != n {
			t.Errorf("Lookup(%q) = %v, %v", n, v, ok)
		}
		if v.IsInt && !v.Default.IsNull() && (types.ToIntLenient(v.Default) < v.Min || v.Max > 0 && types.ToIntLenient(v.Default) > v.Max) {
			t.Errorf("%s: default %v outside [%d, %d]", n, v.Default, v.Min, v.Max)
		}
	}
	if v, ok := Lookup("Max_Allowed_Packet"); !ok || v.Name != "max_allowed_packet" {
		t.Error("Lookup is not case-insensitive")
	}
	for _, v := range []*Var{Durability, BeforeImages, LocalInfile} {
		if v == nil || Must(v.Name) != v {
			t.Errorf("hot variable %v not defined", v)
		}
	}
}
