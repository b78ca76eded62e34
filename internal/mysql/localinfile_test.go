package mysql

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// localFiles is internal/sql's LocalFileOpener, which the connection's ResultWriter implements.
type localFiles interface {
	LocalFilesEnabled() bool
	OpenLocalFile(name string) (io.ReadCloser, error)
}

// infileLog records what the fake's LOAD statements saw.
type infileLog struct {
	mu      sync.Mutex
	data    []string
	readErr []error
}

func (l *infileLog) add(data string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.data = append(l.data, data)
	l.readErr = append(l.readErr, err)
}

func (l *infileLog) last() (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.data) == 0 {
		return "", errors.New("no LOAD ran")
	}
	return l.data[len(l.data)-1], l.readErr[len(l.readErr)-1]
}

// openerOf finds the connection's writer under the fake's wrapper.
func openerOf(w proto.ResultWriter) (localFiles, bool) {
	if m, ok := w.(*moreWriter); ok {
		w = m.ResultWriter
	}
	o, ok := w.(localFiles)
	return o, ok
}

// loadStmts are fake statements that ask for the file "f" (or the file named after LOAD FILE).
func loadStmts(h *fakeHandler, log *infileLog) {
	open := func(w proto.ResultWriter, name string) (io.ReadCloser, error) {
		o, ok := openerOf(w)
		if !ok {
			return nil, errors.New("writer is not a LocalFileOpener")
		}
		if !o.LocalFilesEnabled() {
			// What the SQL layer answers before asking.
			return nil, localFilesDisabled()
		}
		return o.OpenLocalFile(name)
	}
	// Reads the whole file, then answers OK with its length.
	readAll := func(name string) stmtFunc {
		return func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
			rc, err := open(w, name)
			if err != nil {
				return err
			}
			b, err := io.ReadAll(rc)
			log.add(string(b), err)
			if cerr := rc.Close(); cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
			return w.OK(proto.OK{AffectedRows: uint64(len(b)), Info: fmt.Sprintf("Records: %d", len(b))}, false)
		}
	}
	h.stmts["LOAD ALL"] = readAll("f")
	h.stmts["LOAD DATA LOCAL INFILE 'Reader::data' INTO TABLE t"] = readAll("Reader::data")
	h.stmts["LOAD DATA LOCAL INFILE 'unregistered' INTO TABLE t"] = readAll("unregistered")
	// Fails before reading anything: Close drains the file.
	h.stmts["LOAD FAIL"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		rc, err := open(w, "f")
		if err != nil {
			return err
		}
		defer rc.Close()
		return sqlerr.New(sqlerr.ErrDupEntry, "Duplicate entry '1' for key 't.PRIMARY'")
	}
	// Reads a little and forgets to close: the connection drains.
	h.stmts["LOAD FORGET"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		rc, err := open(w, "f")
		if err != nil {
			return err
		}
		var b [3]byte
		n, _ := io.ReadFull(rc, b[:])
		log.add(string(b[:n]), nil)
		return w.OK(proto.OK{AffectedRows: uint64(n)}, false)
	}
}

// sendFile writes the file's packets and the empty packet that ends it.
func (c *rawClient) sendFile(chunks ...string) {
	c.t.Helper()
	for _, ch := range chunks {
		c.write([]byte(ch))
	}
	c.write(nil)
}

func (c *rawClient) expectInfileRequest(name string) {
	c.t.Helper()
	b := c.mustRead()
	if len(b) == 0 || b[0] != hdrLocalInfile || string(b[1:]) != name {
		c.t.Fatalf("want LOCAL INFILE request for %q, got %q", name, b)
	}
}

// okAffected decodes an OK packet's affected rows, status and info.
func okAffected(t *testing.T, b []byte) (uint64, uint16, string) {
	t.Helper()
	if len(b) < 7 || b[0] != hdrOK {
		t.Fatalf("want OK, got %q", b)
	}
	r := reader{b: b[1:]}
	n, _ := r.lenencInt()
	r.lenencInt()
	status := r.u16()
	r.u16()
	if r.remaining() == 0 {
		return n, status, ""
	}
	return n, status, string(r.lenencBytes()) // the info text is length-encoded, as mysqld sends it
}

func TestLocalInfileExchange(t *testing.T) {
	for _, delay := range []time.Duration{-1, defaultPeerWatchDelay} {
		t.Run(fmt.Sprintf("watch delay %v", delay), func(t *testing.T) {
			h := newFakeHandler()
			log := &infileLog{}
			loadStmts(h, log)
			_, addr := startServer(t, Config{peerWatchDelay: delay}, h)
			c := dialRaw(t, addr)
			c.mustLogin("root", "", rawClientCaps|pmysql.ClientLocalFiles)

			// The file in several packets; the client takes its time (the peer watch, when it has
			// started, must not take the file for a next command).
			c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL"...)...)
			c.expectInfileRequest("f")
			time.Sleep(2 * defaultPeerWatchDelay)
			c.sendFile("hello ", strings.Repeat("x", 20000), "world")
			n, _, info := okAffected(t, c.mustRead())
			if data, err := log.last(); n != 20011 || info != "Records: 20011" || err != nil ||
				data != "hello "+strings.Repeat("x", 20000)+"world" {
				t.Fatalf("affected %d info %q err %v", n, info, err)
			}
			c.command(pmysql.ComPing)
			c.expectOK()

			// An empty file: the empty packet alone.
			c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL"...)...)
			c.expectInfileRequest("f")
			c.sendFile()
			if n, _, _ := okAffected(t, c.mustRead()); n != 0 {
				t.Fatalf("empty file: affected %d", n)
			}

			// A statement that fails at once still lets the client send its whole file, then
			// answers ERR; the connection is in sync.
			c.command(append([]byte{pmysql.ComQuery}, "LOAD FAIL"...)...)
			c.expectInfileRequest("f")
			c.sendFile("a", "b", "c")
			c.expectErr(sqlerr.ErrDupEntry)
			c.command(pmysql.ComPing)
			c.expectOK()

			// A session that does not close the file: the connection reads it to its end.
			c.command(append([]byte{pmysql.ComQuery}, "LOAD FORGET"...)...)
			c.expectInfileRequest("f")
			c.sendFile("abcdef", "ghi")
			if n, _, _ := okAffected(t, c.mustRead()); n != 3 {
				t.Fatalf("forget: affected %d", n)
			}
			c.command(pmysql.ComPing)
			c.expectOK()

			// Multi-statements: each LOAD asks in turn, the first OK announces more results.
			c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL;LOAD ALL"...)...)
			c.expectInfileRequest("f")
			c.sendFile("one")
			if n, st, _ := okAffected(t, c.mustRead()); n != 3 || st&pmysql.ServerMoreResultsExists == 0 {
				t.Fatalf("first of two: affected %d status %#x", n, st)
			}
			c.expectInfileRequest("f")
			c.sendFile("three")
			if n, st, _ := okAffected(t, c.mustRead()); n != 5 || st&pmysql.ServerMoreResultsExists != 0 {
				t.Fatalf("second of two: affected %d status %#x", n, st)
			}

			// Not in the binary protocol.
			c.command(append([]byte{pmysql.ComStmtPrepare}, "LOAD ALL"...)...)
			ok := c.mustRead()
			if ok[0] != hdrOK {
				t.Fatalf("prepare: %q", ok)
			}
			id := uint32(ok[1]) | uint32(ok[2])<<8
			c.command(append([]byte{pmysql.ComStmtExecute}, execBody(id, nil, nil)...)...)
			c.expectErr(sqlerr.ErrUnsupportedPS)
			c.command(pmysql.ComPing)
			c.expectOK()
		})
	}
}

func TestLocalInfileNotEnabledByClient(t *testing.T) {
	h := newFakeHandler()
	loadStmts(h, &infileLog{})
	_, addr := startServer(t, Config{}, h)
	c := dialRaw(t, addr)
	if c.caps&pmysql.ClientLocalFiles == 0 {
		t.Fatal("server does not advertise CLIENT_LOCAL_FILES")
	}
	c.mustLogin("root", "", rawClientCaps)
	c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL"...)...)
	c.expectErr(3948)
	c.command(pmysql.ComPing)
	c.expectOK()
}

func TestLocalInfileBadTransfers(t *testing.T) {
	t.Run("packet too large", func(t *testing.T) {
		h := newFakeHandler()
		log := &infileLog{}
		loadStmts(h, log)
		_, addr := startServer(t, Config{MaxAllowedPacket: 1 << 10}, h)
		c := dialRaw(t, addr)
		c.mustLogin("root", "", rawClientCaps|pmysql.ClientLocalFiles)
		c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL"...)...)
		c.expectInfileRequest("f")
		c.write(bytes.Repeat([]byte{'x'}, 2<<10))
		c.expectErr(sqlerr.ErrNetPacketTooLarge)
		c.expectClosed()
		if _, err := log.last(); !sqlerr.Is(err, sqlerr.ErrNetReadError) {
			t.Fatalf("session read error %v", err)
		}
	})
	t.Run("out of sequence", func(t *testing.T) {
		h := newFakeHandler()
		loadStmts(h, &infileLog{})
		_, addr := startServer(t, Config{}, h)
		c := dialRaw(t, addr)
		c.mustLogin("root", "", rawClientCaps|pmysql.ClientLocalFiles)
		c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL"...)...)
		c.expectInfileRequest("f")
		seq := c.p.seq
		c.p.seq = seq + 5
		c.write([]byte("data"))
		c.p.seq = seq
		c.expectErr(sqlerr.ErrNetPacketsOutOfOrder)
		c.expectClosed()
	})
	t.Run("client goes away", func(t *testing.T) {
		h := newFakeHandler()
		log := &infileLog{}
		loadStmts(h, log)
		_, addr := startServer(t, Config{}, h)
		c := dialRaw(t, addr)
		c.mustLogin("root", "", rawClientCaps|pmysql.ClientLocalFiles)
		c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL"...)...)
		c.expectInfileRequest("f")
		c.write([]byte("partial"))
		c.nc.Close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := log.last(); err != nil && sqlerr.Is(err, sqlerr.ErrNetReadError) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the session did not see the transfer fail")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The server goes on.
		c2 := dialRaw(t, addr)
		c2.mustLogin("root", "", rawClientCaps)
		c2.command(pmysql.ComPing)
		c2.expectOK()
	})
	t.Run("client stalls", func(t *testing.T) {
		h := newFakeHandler()
		log := &infileLog{}
		loadStmts(h, log)
		_, addr := startServer(t, Config{NetReadTimeout: 100 * time.Millisecond}, h)
		c := dialRaw(t, addr)
		c.mustLogin("root", "", rawClientCaps|pmysql.ClientLocalFiles)
		c.command(append([]byte{pmysql.ComQuery}, "LOAD ALL"...)...)
		c.expectInfileRequest("f")
		c.write([]byte("some"))
		c.expectClosed()
		if _, err := log.last(); !sqlerr.Is(err, sqlerr.ErrNetReadInterrupted) {
			t.Fatalf("session read error %v", err)
		}
	})
}

// go-sql-driver/mysql: registered readers and files (allowAllFiles), and a file it refuses.
func TestDriverLoadDataLocal(t *testing.T) {
	h := newFakeHandler()
	log := &infileLog{}
	loadStmts(h, log)
	big := strings.Repeat("0123456789abcdef\n", 200000) // 3.4 MB: many packets
	path := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	fileStmt := "LOAD DATA LOCAL INFILE '" + path + "' INTO TABLE t"
	_, addr := startServer(t, Config{}, h)

	gomysql.RegisterReaderHandler("data", func() io.Reader { return strings.NewReader("1\tone\n2\ttwo\n") })
	defer gomysql.DeregisterReaderHandler("data")
	db := openDB(t, addr, "root", "", "allowAllFiles=true")
	res, err := db.Exec("LOAD DATA LOCAL INFILE 'Reader::data' INTO TABLE t")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 12 {
		t.Fatalf("reader: affected %d", n)
	}
	if data, _ := log.last(); data != "1\tone\n2\ttwo\n" {
		t.Fatalf("reader data %q", data)
	}

	// A file from disk, in many packets.
	h.stmts[fileStmt] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		o, _ := openerOf(w)
		rc, err := o.OpenLocalFile(path)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		log.add(string(b), err)
		rc.Close()
		return w.OK(proto.OK{AffectedRows: uint64(len(b))}, false)
	}
	res, err = db.Exec(fileStmt)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(big)) {
		t.Fatalf("file: affected %d, want %d", n, len(big))
	}
	if data, _ := log.last(); data != big {
		t.Fatalf("file data differs (%d bytes, want %d)", len(data), len(big))
	}

	// Without allowAllFiles the driver refuses the request with an empty file and reports its
	// own error; the connection stays usable.
	db2 := openDB(t, addr, "root", "", "")
	db2.SetMaxOpenConns(1)
	if _, err := db2.Exec("LOAD DATA LOCAL INFILE 'unregistered' INTO TABLE t"); err == nil {
		t.Fatal("driver accepted an unregistered file")
	}
	if data, _ := log.last(); data != "" {
		t.Fatalf("refused file read %q", data)
	}
	if _, err := db2.Exec("LOAD DATA LOCAL INFILE 'Reader::data' INTO TABLE t"); err != nil {
		t.Fatal(err)
	}
}
