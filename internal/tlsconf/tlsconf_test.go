package tlsconf

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A data directory's first start generates the pair (keys 0600), later starts reuse it unchanged,
// and a partial set is refused rather than replaced.
func TestEnsureAuto(t *testing.T) {
	dir := t.TempDir()
	f, generated, err := EnsureAuto(dir)
	if err != nil || !generated {
		t.Fatalf("first EnsureAuto: generated=%v err=%v", generated, err)
	}
	for name, want := range map[string]os.FileMode{CAFile: 0o644, CAKeyFile: 0o600, CertFile: 0o644, KeyFile: 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", name, st.Mode().Perm(), want)
		}
	}
	before, _ := os.ReadFile(f.Cert)
	f2, generated, err := EnsureAuto(dir)
	if err != nil || generated || f2 != f {
		t.Fatalf("second EnsureAuto: %+v generated=%v err=%v", f2, generated, err)
	}
	after, _ := os.ReadFile(f.Cert)
	if !bytes.Equal(before, after) {
		t.Fatal("the certificate changed on reuse")
	}
	set, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	// The server certificate chains to the CA and names the loopback address (VERIFY_IDENTITY).
	leaf, err := x509.ParseCertificate(set.Cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: set.Pool, DNSName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}

	if err := os.Remove(f.Key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := EnsureAuto(dir); err == nil || !strings.Contains(err.Error(), KeyFile) {
		t.Fatalf("partial set: %v, want an error naming %s", err, KeyFile)
	}
}

// Peer configurations: mutual TLS between certificates of one CA; another CA's certificate is
// refused by the server and the client side.
func TestPeerConfigs(t *testing.T) {
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	set := func(ca *CA, cn string) *Set {
		c, k, err := ca.Issue(cn)
		if err != nil {
			t.Fatal(err)
		}
		s, err := FromPEM(c, k, ca.CertPEM())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b, x := set(ca, "a"), set(ca, "b"), set(other, "x")
	// handshake runs both sides over loopback TCP; the client then reads, so that a refusal the
	// server sends after the client's side is done (TLS 1.3 verifies client certificates last)
	// reaches it.
	handshake := func(srv, cli *tls.Config) (serverErr, clientErr error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		done := make(chan error, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				done <- err
				return
			}
			defer c.Close()
			s := tls.Server(c, srv)
			err = s.Handshake()
			if err == nil {
				_, err = s.Write([]byte{1})
			}
			done <- err
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		tc := tls.Client(c, cli)
		clientErr = tc.Handshake()
		if clientErr == nil {
			_, clientErr = tc.Read(make([]byte, 1))
		}
		if clientErr != nil {
			c.Close()
		}
		return <-done, clientErr
	}
	if se, ce := handshake(a.PeerServer(true), b.PeerClient()); se != nil || ce != nil {
		t.Fatalf("same CA: server %v, client %v", se, ce)
	}
	if se, _ := handshake(a.PeerServer(true), x.PeerClient()); se == nil {
		t.Fatal("the server accepted a client of another CA")
	}
	if _, ce := handshake(x.PeerServer(true), a.PeerClient()); ce == nil {
		t.Fatal("the client accepted a server of another CA")
	}
	noCert := &Set{Pool: a.Pool} // kiln cluster --tls-ca without a certificate
	if se, _ := handshake(a.PeerServer(true), noCert.PeerClient()); se == nil {
		t.Fatal("the raft side accepted a client without a certificate")
	}
	if se, ce := handshake(a.PeerServer(false), noCert.PeerClient()); se != nil || ce != nil {
		t.Fatalf("the HTTP side refused a client without a certificate: server %v, client %v", se, ce)
	}
}
