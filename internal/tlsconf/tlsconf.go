// Package tlsconf owns Kiln's certificates: the self-signed CA and server certificate a data
// directory gets at initialisation (as MySQL 8's auto_generate_certs), loading the files an operator
// names instead, and the crypto/tls configurations built from them for MySQL clients and for the
// links between the members of a cluster (raft transport, engine snapshots, the HTTP admin port).
//
// The rules (docs/operations.md, "TLS"):
//   - MySQL clients are offered TLS whenever the server has a certificate: the operator's
//     (--tls-cert/--tls-key) or the data directory's generated one.
//   - Peer TLS is on exactly when a CA is given (--tls-ca), and then the node's certificate must be
//     given too: a generated pair is signed by a CA of its own, one per node, so no other node could
//     verify it. Peers present their certificates both ways (mutual TLS) and each verifies the
//     other's chain against the CA. Host names are not checked: the CA is the cluster's, and any
//     certificate it signed is a member's.
//
// It depends on the standard library only.
package tlsconf

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files a data directory's generated pair lives in, named as MySQL 8 names them.
const (
	CAFile     = "ca.pem"
	CAKeyFile  = "ca-key.pem"
	CertFile   = "server-cert.pem"
	KeyFile    = "server-key.pem"
	autoPrefix = "Kiln_Server_Auto_Generated_"
	// autoValidity is how long generated certificates are valid: MySQL's are valid for 10 years.
	autoValidity = 10 * 365 * 24 * time.Hour
)

// Files names the PEM files of a TLS setup. CA is optional for MySQL clients and required for peer
// TLS.
type Files struct {
	Cert, Key, CA string
}

// EnsureAuto makes sure dir holds a generated CA and server certificate and returns their files. It
// writes them only when none of ca.pem, server-cert.pem and server-key.pem exists (a data
// directory's first start); when all exist they are reused as they are; a partial set is an error
// naming what is missing, rather than a silent replacement of the operator's files. generated says
// whether this call wrote them.
func EnsureAuto(dir string) (f Files, generated bool, err error) {
	f = Files{Cert: filepath.Join(dir, CertFile), Key: filepath.Join(dir, KeyFile), CA: filepath.Join(dir, CAFile)}
	var missing []string
	for _, p := range []string{f.CA, f.Cert, f.Key} {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, filepath.Base(p))
		} else if err != nil {
			return f, false, fmt.Errorf("tls: %w", err)
		}
	}
	switch len(missing) {
	case 0:
		return f, false, nil
	case 3:
	default:
		return f, false, fmt.Errorf("tls: data directory %s has some of its generated certificate files but not %v: restore them, or remove %s, %s and %s to generate a new pair",
			dir, missing, CAFile, CertFile, KeyFile)
	}
	if err := generate(dir); err != nil {
		return f, false, fmt.Errorf("tls: generate certificates in %s: %w", dir, err)
	}
	return f, true, nil
}

// CA is a certificate authority that can sign certificates: the generated one of a data directory,
// and in tests a cluster's.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer // *ecdsa.PrivateKey when made here; RSA or Ed25519 when loaded
}

// NewCA makes a self-signed CA named cn. ECDSA P-256 keys: every TLS client Kiln targets accepts
// them, and they cost microseconds to make where RSA costs up to a second on a busy machine.
func NewCA(cn string) (*CA, error) {
	now := time.Now().Add(-time.Hour) // tolerate clocks a little behind ours
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now,
		NotAfter:              now.Add(autoValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadCAFiles reads a CA certificate and its private key (PKCS #8, PKCS #1 or SEC 1 PEM, as
// openssl writes them), to issue certificates with.
func LoadCAFiles(certFile, keyFile string) (*CA, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: load CA %s and %s: %w", certFile, keyFile, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("tls: %s: %w", certFile, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("tls: %s is not a CA certificate", certFile)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("tls: %s: unsupported key type %T", keyFile, pair.PrivateKey)
	}
	return &CA{Cert: cert, Key: signer}, nil
}

// CertPEM is the CA's certificate in PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// KeyPEM is the CA's private key in PEM (PKCS #8).
func (ca *CA) KeyPEM() ([]byte, error) { return keyPEM(ca.Key) }

func keyPEM(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Issue signs a certificate named cn for server and client use (a node is both to its peers),
// valid for localhost, the loopback addresses and hosts (names or IP addresses), and returns it and
// its key in PEM.
func (ca *CA) Issue(cn string, hosts ...string) (certPEM, keyPEMBytes []byte, err error) {
	now := time.Now().Add(-time.Hour)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now,
		NotAfter:     now.Add(autoValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" && h != "localhost" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, err
	}
	kp, err := keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), kp, nil
}

// generate writes a self-signed CA and a server certificate it signs, naming this host too, so
// clients that check the host (VERIFY_IDENTITY, mariadb --ssl-verify-server-cert) succeed locally.
func generate(dir string) error {
	ca, err := NewCA(autoPrefix + "CA_Certificate")
	if err != nil {
		return err
	}
	var hosts []string
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	cert, key, err := ca.Issue(autoPrefix+"Server_Certificate", hosts...)
	if err != nil {
		return err
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	// Keys first and the CA last: EnsureAuto treats a directory holding all three of ca.pem,
	// server-cert.pem and server-key.pem as done, so a crash in between leaves a partial set that
	// is reported, never a CA without its key.
	for _, w := range []struct {
		name string
		data []byte
		perm os.FileMode
	}{
		{CAKeyFile, caKey, 0o600},
		{KeyFile, key, 0o600},
		{CertFile, cert, 0o644},
		{CAFile, ca.CertPEM(), 0o644},
	} {
		if err := writeFileAtomic(filepath.Join(dir, w.name), w.data, w.perm); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(fmt.Sprintf("tls: serial number: %v", err))
	}
	return n.Add(n, big.NewInt(1))
}

// writeFileAtomic writes p through a temporary file with perm, fsyncs and renames it, so a crash
// leaves the old file or the new one.
func writeFileAtomic(p string, data []byte, perm os.FileMode) error {
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// OpenFile's perm is masked by the umask; keys must end up 0600 whatever it is.
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Set is a loaded certificate, and the CA when one was given.
type Set struct {
	Files Files
	Cert  tls.Certificate
	// Pool holds the CA certificates; nil without Files.CA.
	Pool *x509.CertPool
}

// Load reads f's files. The certificate must parse with its key; a CA file, if named, must hold at
// least one certificate.
func Load(f Files) (*Set, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("tls: a certificate and its key are both needed")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("tls: load %s and %s: %w", f.Cert, f.Key, err)
	}
	s := &Set{Files: f, Cert: cert}
	if f.CA != "" {
		if s.Pool, err = loadPool(f.CA); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// FromPEM builds a Set from PEM bytes (a certificate, its key, and the CA, which may be nil), as
// Load does from files.
func FromPEM(certPEM, keyPEM, caPEM []byte) (*Set, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	s := &Set{Cert: cert}
	if caPEM != nil {
		s.Pool = x509.NewCertPool()
		if !s.Pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("tls: the CA holds no PEM certificate")
		}
	}
	return s, nil
}

// LoadCA reads a CA file only: a client without a certificate of its own (PeerClient then
// presents none).
func LoadCA(ca string) (*Set, error) {
	pool, err := loadPool(ca)
	if err != nil {
		return nil, err
	}
	return &Set{Files: Files{CA: ca}, Pool: pool}, nil
}

func loadPool(ca string) (*x509.CertPool, error) {
	b, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls: %s holds no PEM certificate", ca)
	}
	return pool, nil
}

func (s *Set) certificates() []tls.Certificate {
	if len(s.Cert.Certificate) == 0 {
		return nil
	}
	return []tls.Certificate{s.Cert}
}

// MySQL is the configuration for MySQL client connections: TLS 1.2 and 1.3 (MySQL 8's
// tls_version), and, with a CA, client certificates verified against it when a client presents one
// (as mysqld with ssl_ca does); none is required.
func (s *Set) MySQL() *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{s.Cert}, MinVersion: tls.VersionTLS12}
	if s.Pool != nil {
		c.ClientCAs = s.Pool
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return c
}

// PeerServer is the configuration a node serves its raft and HTTP admin ports with: a peer must
// present a certificate of the CA. requireCert false asks for one without requiring it (the HTTP
// admin port, where load balancers check /health without a certificate); a presented certificate
// is still verified, and handlers that change the cluster check VerifiedPeer.
func (s *Set) PeerServer(requireCert bool) *tls.Config {
	auth := tls.RequireAnyClientCert
	if !requireCert {
		auth = tls.RequestClientCert
	}
	return &tls.Config{
		Certificates:          []tls.Certificate{s.Cert},
		MinVersion:            tls.VersionTLS12,
		ClientAuth:            auth,
		VerifyPeerCertificate: s.verifyChain,
	}
}

// PeerClient is the configuration a node (or kiln cluster) dials its peers with: it presents its own
// certificate and verifies the peer's chain against the CA, not its host name (see the package
// comment).
func (s *Set) PeerClient() *tls.Config {
	return &tls.Config{
		Certificates: s.certificates(),
		MinVersion:   tls.VersionTLS12,
		// The chain is verified by verifyChain; only the host name check is skipped.
		InsecureSkipVerify:    true,
		VerifyPeerCertificate: s.verifyChain,
	}
}

// verifyChain checks that the peer's certificate chains to the CA, for any key usage (operators'
// certificates often carry only serverAuth, and a node is client and server to its peers).
func (s *Set) verifyChain(raw [][]byte, _ [][]*x509.Certificate) error {
	if len(raw) == 0 {
		return nil // no certificate: RequireAnyClientCert refuses, RequestClientCert allows
	}
	if s.Pool == nil {
		return errors.New("tls: no CA to verify the peer's certificate against")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return fmt.Errorf("tls: peer certificate: %w", err)
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: s.Pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fmt.Errorf("tls: peer certificate %q is not signed by the cluster CA: %w", certs[0].Subject.CommonName, err)
	}
	return nil
}

// VerifiedPeer reports whether a TLS connection state carries a client certificate that
// PeerServer's verification accepted (it refuses the handshake otherwise, so presence is enough).
func VerifiedPeer(st *tls.ConnectionState) bool {
	return st != nil && len(st.PeerCertificates) > 0
}

// CipherName is the OpenSSL name of a cipher suite, as MySQL reports it in Ssl_cipher (for TLS 1.3
// suites, OpenSSL and IANA agree); unknown suites keep Go's name.
func CipherName(id uint16) string {
	switch id {
	case tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:
		return "ECDHE-ECDSA-AES128-GCM-SHA256"
	case tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:
		return "ECDHE-ECDSA-AES256-GCM-SHA384"
	case tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:
		return "ECDHE-RSA-AES128-GCM-SHA256"
	case tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:
		return "ECDHE-RSA-AES256-GCM-SHA384"
	case tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:
		return "ECDHE-ECDSA-CHACHA20-POLY1305"
	case tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:
		return "ECDHE-RSA-CHACHA20-POLY1305"
	case tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA:
		return "ECDHE-ECDSA-AES128-SHA"
	case tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA:
		return "ECDHE-ECDSA-AES256-SHA"
	case tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA:
		return "ECDHE-RSA-AES128-SHA"
	case tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA:
		return "ECDHE-RSA-AES256-SHA"
	}
	return tls.CipherSuiteName(id)
}

// VersionName is MySQL's name of a TLS version (Ssl_version): "TLSv1.2", "TLSv1.3".
func VersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}
