package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// The TLS variables: have_ssl and the certificate files follow the configuration, Ssl_cipher and
// Ssl_version are per session (empty in the global scope and without TLS), and
// require_secure_transport can be turned on only when TLS is configured (3160 otherwise).
func TestTLSVariables(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		tlsSess bool
		want    []string // query => rendered rows
	}{
		{name: "no TLS", cfg: Config{Version: "test"}, want: []string{
			"SELECT @@have_ssl, @@have_openssl, @@ssl_cert, @@require_secure_transport => DISABLED\tDISABLED\t\t0\n",
			"SHOW STATUS LIKE 'Ssl_%' => Ssl_cipher\t\nSsl_version\t\n",
			"SET GLOBAL require_secure_transport = ON => error 3160",
			"SET GLOBAL require_secure_transport = OFF => ok affected=0\n",
		}},
		{name: "TLS", cfg: Config{Version: "test", SSLCert: "/d/server-cert.pem", SSLKey: "/d/server-key.pem", SSLCA: "/d/ca.pem"}, tlsSess: true, want: []string{
			"SELECT @@have_ssl, @@have_openssl, @@ssl_ca, @@ssl_cert, @@ssl_key, @@tls_version => YES\tYES\t/d/ca.pem\t/d/server-cert.pem\t/d/server-key.pem\tTLSv1.2,TLSv1.3\n",
			"SHOW STATUS LIKE 'Ssl_%' => Ssl_cipher\tTLS_AES_128_GCM_SHA256\nSsl_version\tTLSv1.3\n",
			"SHOW SESSION STATUS LIKE 'Ssl_cipher' => Ssl_cipher\tTLS_AES_128_GCM_SHA256\n",
			"SHOW GLOBAL STATUS LIKE 'Ssl_cipher' => Ssl_cipher\t\n",
			"SET GLOBAL require_secure_transport = ON => ok affected=0\n",
			"SELECT @@global.require_secure_transport => 1\n",
			"SET require_secure_transport = OFF => error 1229",
			"SET GLOBAL have_ssl = 'NO' => error 1238",
			"SELECT @@session.require_secure_transport => error 1238",
		}},
		{name: "flag", cfg: Config{Version: "test", SSLCert: "c", SSLKey: "k", RequireSecureTransport: true}, want: []string{
			"SELECT @@require_secure_transport => 1\n",
			"SHOW STATUS LIKE 'Ssl_version' => Ssl_version\t\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := repltest.Start(t, nil, NewApplier(), nil)
			db, err := Open(context.Background(), txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node), tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := db.NewSession(1, "root", "localhost", "")
			if tt.tlsSess {
				s.SSLVersion, s.SSLCipher = "TLSv1.3", "TLS_AES_128_GCM_SHA256"
			}
			for _, line := range tt.want {
				q, want, _ := strings.Cut(line, " => ")
				w := &textWriter{}
				err := s.Query(context.Background(), q, w)
				got := w.b.String()
				if err != nil {
					got = fmt.Sprintf("error %d", sqlerr.As(err).Code)
				}
				if got != want {
					t.Errorf("%s: got %q, want %q (err %v)", q, got, want, err)
				}
			}
		})
	}
}
