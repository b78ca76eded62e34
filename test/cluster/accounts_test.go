package cluster

import (
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestAccountsReplicate: an account created and granted on the primary is a catalog record in the
// log, so once the followers have applied it the user logs in on every node (caching_sha2_password
// full authentication against the replicated hash) with the same privileges, and a revoke
// reaches them the same way.
func TestAccountsReplicate(t *testing.T) {
	c := newCluster(t, 3)
	c.mustExec("CREATE DATABASE acc")
	c.mustExec("CREATE TABLE acc.t (id INT PRIMARY KEY)")
	c.mustExec("INSERT INTO acc.t VALUES (1)")
	c.mustExec("CREATE USER 'rep'@'%' IDENTIFIED BY 'rep-pw'")
	c.mustExec("GRANT SELECT ON acc.* TO 'rep'@'%'")
	if _, err := c.waitConverged(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		db, err := sql.Open("mysql", fmt.Sprintf("rep:rep-pw@tcp(%s)/acc?timeout=5s", n.mysql))
		if err != nil {
			t.Fatal(err)
		}
		var id int
		if err := db.QueryRow("SELECT id FROM t").Scan(&id); err != nil || id != 1 {
			t.Fatalf("%v: rep reading acc.t: %d %v", n, id, err)
		}
		if _, err := db.Exec("DELETE FROM t"); mysqlCode(err) != 1142 {
			t.Fatalf("%v: DELETE without the privilege: %v, want 1142", n, err)
		}
		db.Close()
	}
	c.mustExec("REVOKE SELECT ON acc.* FROM 'rep'@'%'")
	if _, err := c.waitConverged(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		db, err := sql.Open("mysql", fmt.Sprintf("rep:rep-pw@tcp(%s)/?timeout=5s", n.mysql))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("SELECT id FROM acc.t"); mysqlCode(err) != 1142 {
			t.Fatalf("%v: SELECT after REVOKE: %v, want 1142", n, err)
		}
		db.Close()
	}
}
