package ddl

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

// checkIdent validates the name of a database, table, view or column as MySQL does: not empty, no
// trailing space, no NUL (code, "Incorrect ... name"), at most 64 characters (1059), and only
// characters of the Basic Multilingual Plane, since MySQL keeps names in utf8mb3 (1300).
func checkIdent(name string, code uint16, what string) error {
	if name == "" || strings.HasSuffix(name, " ") || strings.IndexByte(name, 0) >= 0 {
		return sqlerr.New(code, "Incorrect %s name '%s'", what, strings.ReplaceAll(name, "\x00", "\\0"))
	}
	return checkNameChars(name)
}

// checkNameChars checks what every schema object name must meet (index and constraint names too):
// valid UTF-8 within the BMP, at most 64 characters.
func checkNameChars(name string) error {
	n := 0
	for i, r := range name {
		if r == utf8.RuneError || r > 0xFFFF {
			end := min(i+4, len(name))
			return sqlerr.New(sqlerr.ErrInvalidCharacterString, "Invalid utf8mb3 character string: '%X'", name[i:end])
		}
		n++
	}
	if n > 64 {
		return sqlerr.New(sqlerr.ErrTooLongIdent, "Identifier name '%s' is too long", name)
	}
	return nil
}

// checkIndexName validates an index or constraint name.
func checkIndexName(name string) error {
	if strings.IndexByte(name, 0) >= 0 {
		return sqlerr.New(sqlerr.ErrWrongNameForIndex, "Incorrect index name '%s'", strings.ReplaceAll(name, "\x00", "\\0"))
	}
	return checkNameChars(name)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// nextGeneratedNumber is the N MySQL 8 gives the next unnamed constraint of a table when it
// names it prefix+N ("t_ibfk_", "t_chk_"): one more than the highest N among the names that are
// already of that form (ALTER TABLE ... ADD FOREIGN KEY / ADD CHECK), so dropping or naming
// constraints never leaves a generated name pointing at a different one. Named constraints do
// not count. The prefix compares case-insensitively, as MySQL compares identifiers.
func nextGeneratedNumber(prefix string, names []string) int {
	high := 0
	for _, n := range names {
		if len(n) <= len(prefix) || !strings.EqualFold(n[:len(prefix)], prefix) {
			continue
		}
		v, err := strconv.Atoi(n[len(prefix):])
		if err != nil || v <= 0 || strconv.Itoa(v) != n[len(prefix):] {
			continue
		}
		high = max(high, v)
	}
	return high + 1
}
