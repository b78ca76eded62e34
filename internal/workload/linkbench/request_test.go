package linkbench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found"}, true},
		{&mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}, true},
		{fmt.Errorf("addlink: %w", &mysql.MySQLError{Number: 1213}), true},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}, false},
		{&mysql.MySQLError{Number: 1064}, false},
		{mysql.ErrInvalidConn, false},
		{errors.New("deadlock"), false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
