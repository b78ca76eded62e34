package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/txn"
)

// TestConfigCallbacks: what the SQL layer asks of the server around it arrives through the
// callbacks of Config, given at Open: SHOW PROCESSLIST, KILL [QUERY], FLUSH PRIVILEGES and account
// changes (the protocol's password cache), SHOW STATUS and the cluster member tables.
func TestConfigCallbacks(t *testing.T) {
	var calls []string
	cfg := Config{
		Version: "test",
		Processes: func() []ProcessInfo {
			return []ProcessInfo{{ID: 1, User: "root", Host: "localhost", Command: "Query", Info: "SHOW PROCESSLIST"},
				{ID: 7, User: "app", Host: "10.0.0.2", DB: "test", Command: "Sleep", Time: 3}}
		},
		Kill: func(id uint32, query bool) error {
			calls = append(calls, fmt.Sprintf("kill %d %v", id, query))
			return nil
		},
		FlushAuthCache: func(user, host string) { calls = append(calls, fmt.Sprintf("flush %q %q", user, host)) },
		Status:         func() map[string]string { return map[string]string{"Kiln_from_server": "42"} },
		ClusterMembers: func() []ClusterMember {
			return []ClusterMember{{ID: 3, RaftAddr: "10.0.0.3:7000", Role: "PRIMARY", State: "ONLINE", Voter: true, Self: true}}
		},
	}
	st := repltest.Start(t, nil, NewApplier(), nil)
	db, err := Open(context.Background(), txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession(1, "root", "localhost", "")
	for _, c := range []struct{ q, want string }{
		{"SHOW PROCESSLIST", "7\tapp\t10.0.0.2\ttest\tSleep\t3"},
		{"SHOW GLOBAL STATUS LIKE 'Kiln_from_server'", "Kiln_from_server\t42"},
		{"SELECT MEMBER_ID, RAFT_ADDRESS, MEMBER_ROLE FROM information_schema.KILN_CLUSTER_MEMBERS", "3\t10.0.0.3:7000\tPRIMARY"},
	} {
		if out := mustQ(t, s, c.q); !strings.Contains(out, c.want) {
			t.Errorf("%s: got %q, want a line with %q", c.q, out, c.want)
		}
	}
	for _, q := range []string{"KILL 7", "KILL QUERY 7", "FLUSH PRIVILEGES", "CREATE USER u@h", "DROP USER u@h"} {
		mustQ(t, s, q)
	}
	want := []string{"kill 7 false", "kill 7 true", `flush "" ""`, `flush "u" "h"`}
	if !slices.Equal(calls, want) {
		t.Fatalf("calls %q, want %q", calls, want)
	}
}
