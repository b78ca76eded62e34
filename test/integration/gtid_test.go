package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestGTIDSingleNode: a single node is a cluster of one with GTIDs. @@gtid_executed is
// <cluster uuid>:1-<applied> and grows with a commit; WAIT_FOR_EXECUTED_GTID_SET answers 0 for it
// and gives MySQL's errors through the wire (1772 malformed, 1210 another UUID or a negative
// timeout); @@server_uuid and the cluster UUID are recorded in DATA/CLUSTER and survive a restart;
// a data directory recorded before GTIDs existed (no UUIDs in DATA/CLUSTER) gets them on its next
// start, with the cluster UUID derived from its cluster id.
func TestGTIDSingleNode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	k := startKiln(t, dir)
	db := k.db(t, "")
	re := regexp.MustCompile(`^([0-9a-f-]{36}):1-(\d+)$`)
	read := func() (uuid string, upTo uint64, server string) {
		t.Helper()
		var exec string
		if err := db.QueryRow("SELECT @@gtid_executed, @@server_uuid").Scan(&exec, &server); err != nil {
			t.Fatal(err)
		}
		m := re.FindStringSubmatch(exec)
		if m == nil {
			t.Fatalf("gtid_executed %q", exec)
		}
		n, _ := strconv.ParseUint(m[2], 10, 64)
		return m[1], n, server
	}
	uuid, before, server := read()
	if _, err := db.Exec("CREATE DATABASE g"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE g.t (a INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO g.t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	uuid2, after, _ := read()
	if uuid2 != uuid || after < before+3 {
		t.Fatalf("gtid_executed did not grow by the three commits: %s:1-%d then %s:1-%d", uuid, before, uuid2, after)
	}
	var r int
	if err := db.QueryRow("SELECT WAIT_FOR_EXECUTED_GTID_SET(CONCAT(?, ':', ?), 1)", uuid, after).Scan(&r); err != nil || r != 0 {
		t.Fatalf("WAIT_FOR_EXECUTED_GTID_SET(executed) = %d, %v", r, err)
	}
	if err := db.QueryRow("SELECT WAIT_FOR_EXECUTED_GTID_SET(CONCAT(?, ':', ?), 0.05)", uuid, after+1000).Scan(&r); err != nil || r != 1 {
		t.Fatalf("WAIT_FOR_EXECUTED_GTID_SET(future, 0.05) = %d, %v; want 1", r, err)
	}
	for q, code := range map[string]uint16{
		"SELECT WAIT_FOR_EXECUTED_GTID_SET('x:1')":                                      1772,
		"SELECT WAIT_FOR_EXECUTED_GTID_SET('3e11fa47-71ca-11e1-9e33-c80aa9429562:1')":   1210,
		"SELECT WAIT_FOR_EXECUTED_GTID_SET('3e11fa47-71ca-11e1-9e33-c80aa9429562', -1)": 1210,
		"SET kiln_read_after_gtid = 'nope'":                                             1772,
	} {
		if _, err := db.Exec(q); errCode(err) != code {
			t.Errorf("%s: %v, want %d", q, err, code)
		}
	}

	// KILL QUERY ends a wait without a timeout with 1317; the connection stays usable.
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var connID int64
	if err := conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(context.Background(), fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s:%d')", uuid, after+1000))
		waited <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT WAIT_FOR%'", connID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the wait did not show in the process list")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-waited:
		t.Fatalf("the wait for a future GTID returned: %v", err)
	default:
	}
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", connID)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if errCode(err) != 1317 {
			t.Fatalf("killed wait: %v, want 1317", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KILL QUERY did not end the wait")
	}
	if err := conn.QueryRowContext(context.Background(), "SELECT 1").Scan(&r); err != nil || r != 1 {
		t.Fatalf("the connection after KILL QUERY: %v", err)
	}
	conn.Close()

	// The identity is recorded, and a restart keeps it.
	var id map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "CLUSTER"))
	if err != nil || json.Unmarshal(b, &id) != nil || id["cluster_uuid"] != uuid || id["server_uuid"] != server {
		t.Fatalf("DATA/CLUSTER %s (%v): want cluster_uuid %s, server_uuid %s", b, err, uuid, server)
	}
	db.Close()
	k.stop()
	k.start()
	db = k.db(t, "")
	if u, n, s := read(); u != uuid || s != server || n < after {
		t.Fatalf("after a restart: %s:1-%d, server %s; want %s:1-(>=%d), server %s", u, n, s, uuid, after, server)
	}

	// A data directory from before GTIDs: the UUIDs are made on the next start; the cluster's is
	// the same (derived from the cluster id), the server's new.
	db.Close()
	k.stop()
	delete(id, "cluster_uuid")
	delete(id, "server_uuid")
	b, _ = json.Marshal(id)
	if err := os.WriteFile(filepath.Join(dir, "CLUSTER"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	k.start()
	db = k.db(t, "")
	u, _, s := read()
	if u != uuid || s == server || len(s) != 36 {
		t.Fatalf("after an upgrade: cluster uuid %s (want %s), server uuid %s (want a new one)", u, uuid, s)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "CLUSTER"))
	if err := json.Unmarshal(b, &id); err != nil || id["cluster_uuid"] != uuid || id["server_uuid"] != s {
		t.Fatalf("DATA/CLUSTER after an upgrade: %s", b)
	}
}
