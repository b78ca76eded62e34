package ddl

import "testing"

// TestNextGeneratedNumber: ALTER TABLE ... ADD FOREIGN KEY / ADD CHECK name an unnamed constraint
// one past the highest generated number, as MySQL 8 does; other names do not count.
func TestNextGeneratedNumber(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  int
	}{
		{nil, 1},
		{[]string{"named"}, 1},
		{[]string{"t_ibfk_2"}, 3},
		{[]string{"t_ibfk_1", "t_ibfk_7", "other"}, 8},
		{[]string{"T_IBFK_4"}, 5},                           // identifiers compare case-insensitively
		{[]string{"t_ibfk_x", "t_ibfk_", "t_ibfk_01"}, 1},   // not a generated number
		{[]string{"t_ibfk_0", "t_ibfk_-1", "tt_ibfk_9"}, 1}, // nor these
	} {
		if got := nextGeneratedNumber("t_ibfk_", tc.names); got != tc.want {
			t.Errorf("nextGeneratedNumber(%q) = %d, want %d", tc.names, got, tc.want)
		}
	}
}
