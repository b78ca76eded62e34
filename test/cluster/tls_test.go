package cluster

import (
	"bytes"
	"crypto/tls"
	"database/sql"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/kiln-db/kiln/internal/tlsconf"
)

// TestClusterTLS: three kiln serve processes with --tls-cert/--tls-key/--tls-ca (certificates of
// one CA) elect a leader over TLS raft links and replicate to every node; their HTTP ports serve
// HTTPS; a MySQL client verifies a node against the CA; `kiln cluster status` needs --tls-ca, and a
// membership change needs a client certificate of the CA (403 without one).
func TestClusterTLS(t *testing.T) {
	// The CA and certificates come from kiln tls, as an operator makes them.
	dir := t.TempDir()
	run := func(args ...string) {
		if out, err := exec.Command(kilnBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("kiln %v: %v\n%s", args, err, out)
		}
	}
	run("tls", "ca", "--dir", dir)
	caFile := filepath.Join(dir, "ca.pem")
	issue := func(name string) (cert, key string) {
		run("tls", "issue", "--ca-dir", dir, "--name", name, "--out", dir)
		return filepath.Join(dir, name+"-cert.pem"), filepath.Join(dir, name+"-key.pem")
	}
	adminCert, adminKey := issue("admin")
	admin, err := tlsconf.Load(tlsconf.Files{Cert: adminCert, Key: adminKey, CA: caFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := mysql.RegisterTLSConfig("kiln-cluster-ca", &tls.Config{RootCAs: admin.Pool}); err != nil {
		t.Fatal(err)
	}

	c := newClusterWith(t, 3, nil, func(c *cluster, n *node) {
		cert, key := issue(fmt.Sprintf("node%d", n.id))
		n.args = append(n.args, "--tls-cert", cert, "--tls-key", key, "--tls-ca", caFile)
		c.scheme = "https"
		c.hc = &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: admin.PeerClient()}}
	})
	c.mustExec("CREATE DATABASE tlsdb")
	c.mustExec("CREATE TABLE tlsdb.t (id INT PRIMARY KEY, v VARCHAR(20))")
	for i := 1; i <= 20; i++ {
		c.mustExec("INSERT INTO tlsdb.t VALUES (?, 'over tls')", i)
	}
	c.healAndSettle()
	if rows := c.sameOnAllNodes("SELECT COUNT(*) FROM tlsdb.t"); len(rows) != 1 || rows[0][0] != "20" {
		t.Fatalf("rows on the nodes: %v", rows)
	}

	// A MySQL client verifying the node against the cluster's CA.
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/?timeout=5s&tls=kiln-cluster-ca", c.nodes[1].mysql))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name, cipher string
	if err := db.QueryRow("SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || cipher == "" {
		t.Fatalf("Ssl_cipher %q, %v", cipher, err)
	}

	kiln := func(args ...string) (string, error) {
		cmd := exec.Command(kilnBin, append([]string{"cluster", "--http", c.nodes[0].http}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	if out, err := kiln("status", "--tls-ca", caFile); err != nil || !strings.Contains(out, "voter") {
		t.Fatalf("kiln cluster status --tls-ca: %v\n%s", err, out)
	}
	if out, err := kiln("status"); err == nil {
		t.Fatalf("kiln cluster status over plain HTTP to an HTTPS port succeeded:\n%s", out)
	}
	// Without a client certificate a membership change is refused before it is looked at; with
	// one, it reaches the node (which refuses to remove a member it does not have, or redirects to
	// the leader: either way, not 403).
	if out, err := kiln("remove", "--id", "99", "--tls-ca", caFile); err == nil || !strings.Contains(out, "403") {
		t.Fatalf("membership change without a client certificate: %v\n%s", err, out)
	}
	if out, _ := kiln("remove", "--id", "99", "--tls-ca", caFile, "--tls-cert", adminCert, "--tls-key", adminKey); strings.Contains(out, "403") || out == "" {
		t.Fatalf("membership change with a client certificate of the CA was refused:\n%s", out)
	} else {
		t.Logf("with a client certificate: %s", strings.TrimSpace(out))
	}
}
