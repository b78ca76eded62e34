package mysql

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/auth"
	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// stmtFunc produces the results of a statement; args is nil for COM_QUERY.
type stmtFunc func(ctx context.Context, args []types.Value, w proto.ResultWriter) error

// fakeHandler is a Handler whose sessions answer statements from a table keyed by their text.
// Multi-statement texts are split on ";" (the fake's statements never contain one).
type fakeHandler struct {
	users map[string]string // user -> password (hashed for LookupAccount with the account's plugin)
	// plugins overrides an account's plugin (default: defaultPlugin, or caching_sha2_password).
	plugins       map[string]string
	defaultPlugin string
	lockedAcct    map[string]bool
	requireSSL    map[string]bool
	stmts         map[string]stmtFunc

	openErr error
	idle    time.Duration

	mu       sync.Mutex
	infos    []proto.ConnInfo
	queries  []string
	execArgs [][]types.Value
	closed   int
	closedSt []uint32
	resets   int
	multiOn  []bool
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{
		users: map[string]string{"root": "", "alice": "secret", "bob": "pässwörd with spaces and a long tail 0123456789"},
		stmts: map[string]stmtFunc{},
	}
}

// fakeSalt makes the fake's caching_sha2_password hashes deterministic.
var fakeSalt = []byte("0123456789abcdefghij")

func (h *fakeHandler) LookupAccount(user, host string) (proto.Account, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pw, ok := h.users[user]
	if !ok {
		return proto.Account{}, false
	}
	a := proto.Account{User: user, Host: "%", Plugin: h.plugins[user], Locked: h.lockedAcct[user], RequireSSL: h.requireSSL[user]}
	if a.Plugin == "" {
		a.Plugin = h.defaultPlugin
	}
	if a.Plugin == "" {
		a.Plugin = CachingSHA2Password
	}
	if pw != "" {
		if a.Plugin == NativePassword {
			a.AuthString = auth.NativeHash(pw)
		} else {
			a.AuthString = auth.CachingSHA2HashWithSalt(pw, fakeSalt, 5000)
		}
	}
	return a, true
}

// warmSHA2 puts an account's digest in the server's caching_sha2_password cache, as an earlier
// full authentication would.
func warmSHA2(srv *Server, h *fakeHandler, user string) {
	a, _ := h.LookupAccount(user, "127.0.0.1")
	srv.cacheDigest(a, auth.SHA2Digest(h.users[user]))
}

// scrambleNative is mysql_native_password's token (the client side):
// SHA1(password) XOR SHA1(scramble, SHA1(SHA1(password))).
func scrambleNative(scramble []byte, password string) []byte {
	if password == "" {
		return nil
	}
	stage1 := sha1.Sum([]byte(password))
	stage2 := sha1.Sum(stage1[:])
	h := sha1.New()
	h.Write(scramble)
	h.Write(stage2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= stage1[i]
	}
	return out
}

// scrambleSHA2 is caching_sha2_password's token (the client side):
// SHA256(password) XOR SHA256(SHA256(SHA256(password)), scramble).
func scrambleSHA2(scramble []byte, password string) []byte {
	if password == "" {
		return nil
	}
	m1 := sha256.Sum256([]byte(password))
	m1h := sha256.Sum256(m1[:])
	h := sha256.New()
	h.Write(m1h[:])
	h.Write(scramble)
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= m1[i]
	}
	return out
}

func (h *fakeHandler) OpenSession(ctx context.Context, info proto.ConnInfo) (proto.Session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.infos = append(h.infos, info)
	if h.openErr != nil {
		return nil, h.openErr
	}
	if info.DB == "nope" {
		return nil, sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", info.DB)
	}
	return &fakeSession{h: h, prepared: map[uint32]string{}}, nil
}

// locked runs f under the handler's mutex, for tests reading what sessions recorded: the race
// detector does not see the network as synchronisation.
func (h *fakeHandler) locked(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
}

func (h *fakeHandler) lastInfo() proto.ConnInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.infos[len(h.infos)-1]
}

func (h *fakeHandler) lastExecArgs() []types.Value {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.execArgs) == 0 {
		return nil
	}
	return h.execArgs[len(h.execArgs)-1]
}

func (h *fakeHandler) sawQuery(q string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.queries {
		if s == q {
			return true
		}
	}
	return false
}

type fakeSession struct {
	h        *fakeHandler
	nextID   uint32
	prepared map[uint32]string
	inTrans  bool
}

func (s *fakeSession) Query(ctx context.Context, text string, w proto.ResultWriter) error {
	s.h.mu.Lock()
	s.h.queries = append(s.h.queries, text)
	s.h.mu.Unlock()
	parts := strings.Split(text, ";")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		more := i < len(parts)-1
		f := s.h.stmts[p]
		if f == nil {
			switch {
			case strings.HasPrefix(p, "KILL "), p == "BEGIN", p == "COMMIT":
				s.inTrans = p == "BEGIN"
				if err := w.OK(proto.OK{}, more); err != nil {
					return err
				}
				continue
			}
			return sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax near '%s'", p)
		}
		if err := f(ctx, nil, &moreWriter{ResultWriter: w, more: more}); err != nil {
			return err
		}
	}
	return nil
}

// moreWriter sets the more flag of a statement's final result when other statements follow.
type moreWriter struct {
	proto.ResultWriter
	more bool
}

func (m *moreWriter) EndRows(warnings uint16, more bool) error {
	return m.ResultWriter.EndRows(warnings, more || m.more)
}

func (m *moreWriter) OK(ok proto.OK, more bool) error { return m.ResultWriter.OK(ok, more || m.more) }

func (s *fakeSession) Prepare(ctx context.Context, text string) (proto.StmtInfo, error) {
	if strings.HasPrefix(text, "BAD") {
		return proto.StmtInfo{}, sqlerr.New(sqlerr.ErrParse, "You have an error in your SQL syntax")
	}
	if strings.HasPrefix(text, "PANIC") {
		panic("prepare exploded")
	}
	s.nextID++
	s.prepared[s.nextID] = text
	info := proto.StmtInfo{ID: s.nextID, Params: strings.Count(text, "?")}
	if strings.HasPrefix(text, "SELECT") {
		info.Columns = []proto.Column{{Name: "x", Type: pmysql.TypeLonglong}}
	}
	return info, nil
}

func (s *fakeSession) Execute(ctx context.Context, id uint32, args []types.Value, w proto.ResultWriter) error {
	text, ok := s.prepared[id]
	if !ok {
		return sqlerr.New(sqlerr.ErrUnknownStmtHandler, "no such statement %d", id)
	}
	s.h.mu.Lock()
	s.h.execArgs = append(s.h.execArgs, args)
	s.h.mu.Unlock()
	if f := s.h.stmts[text]; f != nil {
		return f(ctx, args, w)
	}
	return w.OK(proto.OK{AffectedRows: uint64(len(args))}, false)
}

func (s *fakeSession) CloseStmt(id uint32) {
	delete(s.prepared, id)
	s.h.mu.Lock()
	s.h.closedSt = append(s.h.closedSt, id)
	s.h.mu.Unlock()
}

func (s *fakeSession) UseDB(ctx context.Context, db string) error {
	if db == "nope" {
		return sqlerr.New(sqlerr.ErrBadDB, "Unknown database '%s'", db)
	}
	return nil
}

func (s *fakeSession) Status() uint16 {
	st := pmysql.ServerStatusAutocommit
	if s.inTrans {
		st |= pmysql.ServerStatusInTrans
	}
	return st
}

func (s *fakeSession) ResetConnection(ctx context.Context) error {
	s.h.mu.Lock()
	s.h.resets++
	s.h.mu.Unlock()
	s.inTrans = false
	return nil
}

func (s *fakeSession) IdleTimeout() time.Duration { return s.h.idle }

func (s *fakeSession) SetMultiStatements(on bool) {
	s.h.mu.Lock()
	s.h.multiOn = append(s.h.multiOn, on)
	s.h.mu.Unlock()
}

func (s *fakeSession) Close() {
	s.h.mu.Lock()
	s.h.closed++
	s.h.mu.Unlock()
}

// rowsOf returns a stmtFunc that sends cols and rows.
func rowsOf(cols []proto.Column, rows ...[]types.Value) stmtFunc {
	return func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		if err := w.Columns(cols); err != nil {
			return err
		}
		for _, r := range rows {
			if err := w.Row(r); err != nil {
				return err
			}
		}
		return w.EndRows(0, false)
	}
}

func okOf(ok proto.OK) stmtFunc {
	return func(ctx context.Context, args []types.Value, w proto.ResultWriter) error { return w.OK(ok, false) }
}

// testLogger discards logs unless the test is verbose.
func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(&tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t testing.TB }

func (w *tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startServer serves h on a free 127.0.0.1 port until the test ends.
func startServer(t testing.TB, cfg Config, h proto.Handler) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RSAKey == nil {
		cfg.RSAKey = testRSAKey(t)
	}
	srv := NewServer(cfg, h, testLogger(t))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return srv, ln.Addr().String()
}

func mustErrCode(t testing.TB, err error, code uint16) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %d, got nil", code)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("Error %d", code)) &&
		!strings.Contains(err.Error(), fmt.Sprintf("ERROR %d", code)) {
		t.Fatalf("want error %d, got %v", code, err)
	}
}
