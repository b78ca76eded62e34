package integration

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
)

var tlsRegMu sync.Mutex

// registerCA registers a go-sql-driver TLS configuration verifying against the CA in file.
func registerCA(t *testing.T, name, file string) {
	t.Helper()
	pem, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", file)
	}
	tlsRegMu.Lock()
	defer tlsRegMu.Unlock()
	if err := mysql.RegisterTLSConfig(name, &tls.Config{RootCAs: pool}); err != nil {
		t.Fatal(err)
	}
}

// TestTLSServer: a new data directory gets its CA and server certificate (keys 0600), reused
// unchanged on restart; accounts with REQUIRE SSL log in over TLS only, caching_sha2_password's
// first login (full authentication, the password in cleartext over TLS) and the fast path that
// follows work with go-sql-driver and with the mariadb CLI; --require-secure-transport refuses plain
// connections with 3159.
func TestTLSServer(t *testing.T) {
	dir := t.TempDir()
	k := startKiln(t, dir)
	ca := filepath.Join(dir, "ca.pem")
	for name, mode := range map[string]os.FileMode{"ca.pem": 0o644, "server-cert.pem": 0o644, "server-key.pem": 0o600, "ca-key.pem": 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, st.Mode().Perm(), mode)
		}
	}
	caBefore, _ := os.ReadFile(ca)
	registerCA(t, "it-ca", ca)

	root := k.db(t, "")
	for _, q := range []string{
		"CREATE USER 'tlsu'@'%' IDENTIFIED BY 't-pw' REQUIRE SSL",
		"CREATE USER 'clitls'@'%' IDENTIFIED BY 'c-pw' REQUIRE SSL",
	} {
		mustExec(t, root, q)
	}
	cases := []struct {
		params string
		code   uint16
		what   string
	}{
		{"", 1045, "REQUIRE SSL over a plain connection"},
		{"tls=it-ca", 0, "first login over TLS: full authentication, cleartext over TLS"},
		{"tls=it-ca", 0, "second login: the fast path"},
		{"tls=skip-verify", 0, "REQUIRED without verification"},
	}
	for _, c := range cases {
		dsn := fmt.Sprintf("tlsu:t-pw@tcp(%s)/?timeout=10s", k.addr)
		if c.params != "" {
			dsn += "&" + c.params
		}
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		var cur, ignored, cipher string
		err = db.QueryRow("SELECT CURRENT_USER()").Scan(&cur)
		if err == nil {
			err = db.QueryRow("SHOW STATUS LIKE 'Ssl_cipher'").Scan(&ignored, &cipher)
		}
		db.Close()
		wantErrCode(t, err, c.code, c.what)
		if c.code == 0 && (cur != "tlsu@%" || cipher == "") {
			t.Fatalf("%s: CURRENT_USER %q, Ssl_cipher %q", c.what, cur, cipher)
		}
	}

	if cli, err := exec.LookPath("mariadb"); err == nil {
		host, port, _ := strings.Cut(k.addr, ":")
		run := func(args ...string) (string, error) {
			out, err := exec.Command(cli, append([]string{"--no-defaults", "--protocol=TCP", "-h", host, "-P", port,
				"-uclitls", "-pc-pw", "--batch", "--skip-column-names"}, args...)...).CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		if out, err := run("--ssl-ca="+ca, "--ssl-verify-server-cert", "-e", "SELECT CURRENT_USER()"); err != nil || out != "clitls@%" {
			t.Fatalf("mariadb over TLS (full authentication): %v: %s", err, out)
		}
		if out, err := run("--ssl", "-e", "SELECT CURRENT_USER()"); err != nil || out != "clitls@%" {
			t.Fatalf("mariadb over TLS (fast path): %v: %s", err, out)
		}
		if out, err := run("--skip-ssl", "-e", "SELECT 1"); err == nil || !strings.Contains(out, "1045") {
			t.Fatalf("mariadb without TLS for a REQUIRE SSL account: %v: %s", err, out)
		}
	}

	// Restart with --require-secure-transport: the same certificate, plain connections refused.
	k.stop()
	k.start("--require-secure-transport")
	if caAfter, _ := os.ReadFile(ca); !bytes.Equal(caBefore, caAfter) {
		t.Fatal("ca.pem changed across a restart")
	}
	plain := openAs(t, k.addr, "root", "", "")
	err := plain.Ping()
	wantErrCode(t, err, 3159, "plain connection under --require-secure-transport")
	if !strings.Contains(err.Error(), "Connections using insecure transport are prohibited while --require_secure_transport=ON.") {
		t.Fatalf("3159 message: %v", err)
	}
	secure, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/?timeout=10s&tls=it-ca", k.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer secure.Close()
	var on int
	if err := secure.QueryRow("SELECT @@global.require_secure_transport").Scan(&on); err != nil || on != 1 {
		t.Fatalf("require_secure_transport over TLS: %d, %v", on, err)
	}
}

// TestTLSFlagRules: kiln serve refuses contradictory TLS flags at start, naming the rule (peer TLS
// needs the node's own certificate, since a generated pair's CA is the node's alone).
func TestTLSFlagRules(t *testing.T) {
	pki := t.TempDir()
	out, err := exec.Command(kilnBin, "tls", "ca", "--dir", pki).CombinedOutput()
	if err != nil {
		t.Fatalf("kiln tls ca: %v\n%s", err, out)
	}
	if out, err := exec.Command(kilnBin, "tls", "issue", "--ca-dir", pki, "--name", "n1", "--out", pki).CombinedOutput(); err != nil {
		t.Fatalf("kiln tls issue: %v\n%s", err, out)
	}
	ca, cert, key := filepath.Join(pki, "ca.pem"), filepath.Join(pki, "n1-cert.pem"), filepath.Join(pki, "n1-key.pem")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-ca", ca}, "needs this node's --tls-cert"},
		{[]string{"--tls-cert", cert}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls=false", "--tls-cert", cert, "--tls-key", key}, "contradicts"},
		{[]string{"--tls=false", "--require-secure-transport"}, "needs TLS"},
		{[]string{"--tls-cert", cert, "--tls-key", ca}, "tls:"},
	} {
		args := append([]string{"serve", "--data-dir", filepath.Join(t.TempDir(), "d"), "--listen", freePort(t), "--http", freePort(t)}, c.args...)
		out, err := exec.Command(kilnBin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("kiln serve %v: %v, want a refusal containing %q:\n%s", c.args, err, c.want, out)
		}
	}
	// With --tls=false nothing is generated and clients see no TLS.
	dir := t.TempDir()
	k := startKiln(t, dir, "--tls=false")
	if _, err := os.Stat(filepath.Join(dir, "ca.pem")); err == nil {
		t.Fatal("--tls=false generated certificates")
	}
	var have string
	if err := k.db(t, "").QueryRow("SELECT @@have_ssl").Scan(&have); err != nil || have != "DISABLED" {
		t.Fatalf("@@have_ssl %q %v", have, err)
	}
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/?timeout=10s&tls=skip-verify", k.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err == nil {
		t.Fatal("a client requiring TLS connected to --tls=false")
	}
}
