package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kiln-db/kiln/internal/server"
	"github.com/kiln-db/kiln/internal/tlsconf"
)

// tlsFlags are kiln serve's TLS options (docs/operations.md, "TLS").
type tlsFlags struct {
	on                     bool
	cert, key, ca          string
	requireSecureTransport bool
}

func (t *tlsFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&t.on, "tls", true, "offer TLS to MySQL clients (false: no certificate is loaded or generated, and clients that require TLS cannot connect)")
	f.StringVar(&t.cert, "tls-cert", "", "PEM certificate (chain) of this node; without it and --tls-key, a self-signed CA and server certificate are generated in the data directory on first start (ca.pem, server-cert.pem, server-key.pem) and reused")
	f.StringVar(&t.key, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&t.ca, "tls-ca", "", "PEM CA certificate(s) of the cluster: turns on TLS between cluster members and on the HTTP port, each peer verified against it (needs --tls-cert/--tls-key signed by it); MySQL clients presenting a certificate are verified against it too")
	f.BoolVar(&t.requireSecureTransport, "require-secure-transport", false, "refuse MySQL clients on plain TCP with error 3159 (require_secure_transport; SET GLOBAL changes it at run time)")
}

// tlsSetup is what kiln serve runs with: mysql is nil without TLS for clients, peer nil without
// peer TLS.
type tlsSetup struct {
	set  *tlsconf.Set
	peer *tlsconf.Set
}

// setUp loads or generates the certificates. It runs before the cluster transport is built (which
// needs them) and so initialises the data directory itself: generated files live in it.
func (t *tlsFlags) setUp(cfg *server.Config, logger *slog.Logger) (tlsSetup, error) {
	cfg.RequireSecureTransport = t.requireSecureTransport
	if !t.on {
		if t.cert != "" || t.key != "" || t.ca != "" {
			return tlsSetup{}, errors.New("--tls=false contradicts --tls-cert, --tls-key and --tls-ca")
		}
		if t.requireSecureTransport {
			return tlsSetup{}, errors.New("--require-secure-transport needs TLS (--tls=false turns it off)")
		}
		return tlsSetup{}, nil
	}
	if (t.cert == "") != (t.key == "") {
		return tlsSetup{}, errors.New("--tls-cert and --tls-key go together")
	}
	if t.ca != "" && t.cert == "" {
		// A generated pair has a CA of its own, per node: no peer could verify it.
		return tlsSetup{}, errors.New("--tls-ca (peer TLS) needs this node's --tls-cert and --tls-key, signed by that CA")
	}
	files := tlsconf.Files{Cert: t.cert, Key: t.key, CA: t.ca}
	if t.cert == "" {
		if err := server.InitDataDir(cfg.DataDir); err != nil {
			return tlsSetup{}, err
		}
		var generated bool
		var err error
		if files, generated, err = tlsconf.EnsureAuto(cfg.DataDir); err != nil {
			return tlsSetup{}, err
		}
		if generated {
			logger.Info("generated a self-signed CA and server certificate for TLS", "ca", files.CA, "cert", files.Cert, "key", files.Key)
		}
	}
	set, err := tlsconf.Load(files)
	if err != nil {
		return tlsSetup{}, err
	}
	cfg.SSLCert, cfg.SSLKey, cfg.SSLCA = files.Cert, files.Key, files.CA
	out := tlsSetup{set: set}
	if t.ca != "" {
		out.peer = set
	}
	return out, nil
}

// mysql is the TLS configuration for MySQL clients, nil without TLS.
func (s tlsSetup) mysql() *tls.Config {
	if s.set == nil {
		return nil
	}
	return s.set.MySQL()
}

// requireClientCert wraps an HTTP admin handler that changes the cluster: with peer TLS, only a
// client presenting a certificate of the cluster's CA may call it (kiln cluster --tls-*); the role
// and metrics endpoints stay open to load balancers and scrapers.
func (s tlsSetup) requireClientCert(h http.HandlerFunc) http.HandlerFunc {
	if s.peer == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if !tlsconf.VerifiedPeer(r.TLS) {
			http.Error(w, "a client certificate of the cluster's CA is required", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

// clientTLSFlags are kiln cluster's options for a node whose HTTP port serves TLS.
type clientTLSFlags struct{ cert, key, ca string }

func (c *clientTLSFlags) register(f *pflag.FlagSet) {
	f.StringVar(&c.ca, "tls-ca", "", "the cluster's CA: talk HTTPS to the node, verifying it against this CA (as kiln serve --tls-ca)")
	f.StringVar(&c.cert, "tls-cert", "", "client certificate signed by the cluster's CA (membership changes need one)")
	f.StringVar(&c.key, "tls-key", "", "private key of --tls-cert")
}

// client returns the HTTP client and URL scheme to reach a node's HTTP port with.
func (c *clientTLSFlags) client() (scheme string, tc *tls.Config, err error) {
	if c.ca == "" {
		if c.cert != "" || c.key != "" {
			return "", nil, errors.New("--tls-cert and --tls-key need --tls-ca")
		}
		return "http", nil, nil
	}
	var set *tlsconf.Set
	if c.cert != "" || c.key != "" {
		set, err = tlsconf.Load(tlsconf.Files{Cert: c.cert, Key: c.key, CA: c.ca})
	} else {
		set, err = tlsconf.LoadCA(c.ca)
	}
	if err != nil {
		return "", nil, err
	}
	return "https", set.PeerClient(), nil
}

// tlsCmd is `kiln tls ca|issue`: a cluster CA and node certificates for peer TLS (--tls-ca), without
// openssl.
func tlsCmd() *cobra.Command {
	root := &cobra.Command{Use: "tls", Short: "Make a cluster CA and node certificates for TLS between members (kiln serve --tls-ca)"}
	var dir string
	caCmd := &cobra.Command{Use: "ca", Short: "Write a new CA (ca.pem, ca-key.pem) into --dir",
		RunE: func(cmd *cobra.Command, _ []string) error {
			certFile, keyFile := filepath.Join(dir, tlsconf.CAFile), filepath.Join(dir, tlsconf.CAKeyFile)
			for _, p := range []string{certFile, keyFile} {
				if _, err := os.Stat(p); err == nil {
					return fmt.Errorf("%s exists: not replacing a CA", p)
				}
			}
			ca, err := tlsconf.NewCA("Kiln cluster CA")
			if err != nil {
				return err
			}
			key, err := ca.KeyPEM()
			if err != nil {
				return err
			}
			if err := writeNew(keyFile, key, 0o600); err != nil {
				return err
			}
			if err := writeNew(certFile, ca.CertPEM(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s (keep the key off the nodes)\n", certFile, keyFile)
			return nil
		}}
	caCmd.Flags().StringVar(&dir, "dir", ".", "directory to write ca.pem and ca-key.pem into")
	var caDir, name, out string
	var hosts []string
	issueCmd := &cobra.Command{Use: "issue", Short: "Write a certificate and key signed by the CA in --ca-dir: NAME-cert.pem, NAME-key.pem",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return errors.New("--name is required")
			}
			ca, err := tlsconf.LoadCAFiles(filepath.Join(caDir, tlsconf.CAFile), filepath.Join(caDir, tlsconf.CAKeyFile))
			if err != nil {
				return err
			}
			cert, key, err := ca.Issue(name, hosts...)
			if err != nil {
				return err
			}
			certFile, keyFile := filepath.Join(out, name+"-cert.pem"), filepath.Join(out, name+"-key.pem")
			if err := writeNew(keyFile, key, 0o600); err != nil {
				return err
			}
			if err := writeNew(certFile, cert, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s: kiln serve --tls-cert %s --tls-key %s --tls-ca %s\n",
				certFile, keyFile, certFile, keyFile, filepath.Join(caDir, tlsconf.CAFile))
			return nil
		}}
	f := issueCmd.Flags()
	f.StringVar(&caDir, "ca-dir", ".", "directory holding ca.pem and ca-key.pem (kiln tls ca)")
	f.StringVar(&name, "name", "", "the certificate's common name and file prefix, e.g. node1")
	f.StringSliceVar(&hosts, "host", nil, "host names or IP addresses MySQL clients reach the node by (for clients that check the host; localhost and loopback are always included)")
	f.StringVar(&out, "out", ".", "directory to write the certificate and key into")
	root.AddCommand(caCmd, issueCmd)
	return root
}

// writeNew creates p with perm; an existing file is an error, never overwritten.
func writeNew(p string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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
	return f.Close()
}
