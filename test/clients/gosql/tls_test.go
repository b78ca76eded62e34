package gosql_test

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"os"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
)

var registerOnce sync.Once

// TestTLS connects to the server over TLS: tls=skip-verify (REQUIRED) and a configuration verifying
// the server against $KILN_TLS_CA (VERIFY_CA; scripts/test.sh points it at the CI server's generated
// ca.pem), each seeing its Ssl_version, and a plain connection refused with 3159 while
// require_secure_transport is on. Skipped without KILN_TLS_CA.
func TestTLS(t *testing.T) {
	a := addr(t)
	caFile := os.Getenv("KILN_TLS_CA")
	if caFile == "" {
		t.Skip("KILN_TLS_CA not set: no CA to verify the server with")
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	registerOnce.Do(func() { err = mysql.RegisterTLSConfig("kiln-ca", &tls.Config{RootCAs: pool}) })
	if err != nil {
		t.Fatal(err)
	}
	open := func(params string) *sql.DB {
		db, err := sql.Open("mysql", dsn(a, "", params))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	for _, params := range []string{"tls=skip-verify", "tls=kiln-ca"} {
		var name, v string
		if err := open(params).QueryRow("SHOW STATUS LIKE 'Ssl_version'").Scan(&name, &v); err != nil {
			t.Fatalf("%s: %v", params, err)
		}
		if v != "TLSv1.2" && v != "TLSv1.3" {
			t.Fatalf("%s: Ssl_version %q", params, v)
		}
	}
	admin := open("tls=kiln-ca")
	admin.SetMaxOpenConns(1)
	mustExec(t, admin, "SET GLOBAL require_secure_transport = ON")
	defer mustExec(t, admin, "SET GLOBAL require_secure_transport = OFF")
	err = open("tls=false").Ping()
	wantErr(t, err, 3159, "HY000")
	if err := open("tls=kiln-ca").Ping(); err != nil {
		t.Fatalf("TLS under require_secure_transport: %v", err)
	}
}
