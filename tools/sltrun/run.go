package main

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Counts are the statistics of a file, a folder or a whole run. Records are
// statement and query records reached (a halt ends a file: what follows it is
// not counted); Run = Passed + Failed; Skipped are excluded by skipif/onlyif.
type Counts struct {
	Records int `json:"records"`
	Run     int `json:"run"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

func (c *Counts) Add(o Counts) {
	c.Records += o.Records
	c.Run += o.Run
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.Skipped += o.Skipped
}

// Failure is one failed record, for -v and the JSON.
type Failure struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	SQL    string `json:"sql"`
	Reason string `json:"reason"`
}

// FileResult is the outcome of one .test file.
type FileResult struct {
	Path      string    `json:"path"` // relative to the corpus root
	Folder    string    `json:"folder"`
	Counts    Counts    `json:"counts"`
	Seconds   float64   `json:"seconds"`
	Halted    bool      `json:"halted,omitempty"`
	Timeouts  int       `json:"timeouts,omitempty"`
	SetupErr  string    `json:"setup_error,omitempty"`
	Failures  []Failure `json:"-"`
	failCount int
}

// Options are the runner's settings shared by all files.
type Options struct {
	Addr       string
	User       string
	Password   string
	Engine     string        // name matched by skipif/onlyif
	Timeout    time.Duration // per statement
	InitSQL    []string      // run after every (re)connect
	KeepDB     bool          // do not drop the database at the end
	MaxFailLog int           // failures kept per file
	// MaxTimeouts, if > 0, is how many statements of one file may time out:
	// past it the file's remaining records fail without running.
	MaxTimeouts int
	// Deadline, if set, ends the run: records not started by then fail
	// without running (the report is still complete).
	Deadline time.Time
}

// maxReconnectFailures bounds the reconnect attempts in one file: past it
// the server is taken as gone and the file's remaining records fail at once.
const maxReconnectFailures = 5

// fileRunner runs the records of one file on one connection.
type fileRunner struct {
	opt       *Options
	connector driver.Connector
	dbName    string
	path      string

	conn      driver.Conn
	connID    string
	reconnErr int // consecutive failed (re)connects

	res *FileResult
}

func newConnector(opt *Options, db string) (driver.Connector, error) {
	cfg := mysql.NewConfig()
	cfg.User = opt.User
	cfg.Passwd = opt.Password
	cfg.Net = "tcp"
	cfg.Addr = opt.Addr
	cfg.DBName = db
	cfg.Timeout = 10 * time.Second
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	cfg.AllowNativePasswords = true
	cfg.Logger = mysql.Logger(nopLogger{})
	return mysql.NewConnector(cfg)
}

type nopLogger struct{}

func (nopLogger) Print(...any) {}

// connect opens the file's connection (on its database once created).
func (fr *fileRunner) connect() error {
	if fr.conn != nil {
		return nil
	}
	if fr.reconnErr >= maxReconnectFailures {
		return errors.New("server unreachable: gave up reconnecting")
	}
	ctx, cancel := context.WithTimeout(context.Background(), fr.opt.Timeout+10*time.Second)
	defer cancel()
	c, err := fr.connector.Connect(ctx)
	if err != nil {
		fr.reconnErr++
		return fmt.Errorf("connect: %w", err)
	}
	fr.conn = c
	fr.connID = ""
	if v, err := fr.queryScalar("SELECT CONNECTION_ID()"); err == nil {
		fr.connID = v
	}
	for _, s := range fr.opt.InitSQL {
		if _, err := fr.exec(s); err != nil {
			fr.dropConn(false)
			fr.reconnErr++
			return fmt.Errorf("init statement %q: %w", s, err)
		}
	}
	fr.reconnErr = 0
	return nil
}

// dropConn closes the connection; after a timeout it also kills the server
// side of it from a fresh connection, so a runaway query does not keep
// running (and holding locks) behind us.
func (fr *fileRunner) dropConn(kill bool) {
	if fr.conn == nil {
		return
	}
	_ = fr.conn.Close()
	fr.conn = nil
	if kill && fr.connID != "" {
		killConn(fr.opt, fr.connID)
	}
}

func killConn(opt *Options, id string) {
	conn, err := newConnector(opt, "")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := conn.Connect(ctx)
	if err != nil {
		return
	}
	defer c.Close()
	if ex, ok := c.(driver.ExecerContext); ok {
		_, _ = ex.ExecContext(ctx, "KILL "+id, nil)
	}
}

func (fr *fileRunner) exec(q string) (driver.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fr.opt.Timeout)
	defer cancel()
	res, err := fr.conn.(driver.ExecerContext).ExecContext(ctx, q, nil)
	if err != nil && ctx.Err() != nil {
		return nil, errTimeout
	}
	return res, err
}

func (fr *fileRunner) queryScalar(q string) (string, error) {
	rows, err := fr.query(q)
	if err != nil {
		return "", err
	}
	if len(rows.vals) == 0 {
		return "", errors.New("no rows")
	}
	return textOf(rows.vals[0]), nil
}

var errTimeout = errors.New("timeout")

type result struct {
	ncol int
	vals []any // row-major
}

// query runs q with the per-statement timeout covering the fetch of every
// row, and returns all values.
func (fr *fileRunner) query(q string) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fr.opt.Timeout)
	defer cancel()
	rows, err := fr.conn.(driver.QueryerContext).QueryContext(ctx, q, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errTimeout
		}
		return nil, err
	}
	defer rows.Close()
	res := &result{ncol: len(rows.Columns())}
	dest := make([]driver.Value, res.ncol)
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, errTimeout
			}
			return nil, err
		}
		for _, v := range dest {
			if b, ok := v.([]byte); ok {
				v = string(b) // the driver reuses its buffer
			}
			res.vals = append(res.vals, v)
		}
	}
	if ctx.Err() != nil {
		return nil, errTimeout
	}
	return res, nil
}

// afterError drops the connection if the error left it unusable, so the next
// record reconnects.
func (fr *fileRunner) afterError(err error) {
	if errors.Is(err, errTimeout) {
		fr.res.Timeouts++
		fr.dropConn(true)
		return
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if v, ok := fr.conn.(driver.Validator); ok && !v.IsValid() {
			fr.dropConn(false)
		}
		return
	}
	// Network errors, driver.ErrBadConn, protocol errors: start over.
	fr.dropConn(false)
}

func errText(err error) string {
	if errors.Is(err, errTimeout) {
		return "timeout"
	}
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func (fr *fileRunner) fail(rec *Record, reason string) {
	fr.res.Counts.Failed++
	fr.res.failCount++
	if len(fr.res.Failures) < fr.opt.MaxFailLog {
		fr.res.Failures = append(fr.res.Failures, Failure{File: fr.path, Line: rec.Line, SQL: rec.SQL, Reason: reason})
	}
}

// runFile runs the records of one parsed file on a fresh database.
func runFile(opt *Options, path, relPath, folder string, recs []Record, dbName string) *FileResult {
	start := time.Now()
	res := &FileResult{Path: relPath, Folder: folder}
	fr := &fileRunner{opt: opt, path: relPath, dbName: dbName, res: res}
	defer func() { res.Seconds = time.Since(start).Seconds() }()

	// Create the database on a connection without a default database, then
	// connect on it.
	setupErr := func() error {
		c, err := newConnector(opt, "")
		if err != nil {
			return err
		}
		fr.connector = c
		if err := fr.connect(); err != nil {
			return err
		}
		if _, err := fr.exec("DROP DATABASE IF EXISTS " + dbName); err != nil {
			return fmt.Errorf("DROP DATABASE IF EXISTS %s: %w", dbName, err)
		}
		if _, err := fr.exec("CREATE DATABASE " + dbName); err != nil {
			return fmt.Errorf("CREATE DATABASE %s: %w", dbName, err)
		}
		if _, err := fr.exec("USE " + dbName); err != nil {
			return fmt.Errorf("USE %s: %w", dbName, err)
		}
		// Reconnects go straight to the database.
		c, err = newConnector(opt, dbName)
		if err != nil {
			return err
		}
		fr.connector = c
		return nil
	}()
	if setupErr != nil {
		res.SetupErr = setupErr.Error()
	}

	for i := range recs {
		rec := &recs[i]
		if rec.Kind == KindHashThreshold {
			// Results are compared in the form the file states them (values
			// or "N values hashing to H"), so the threshold needs no state.
			continue
		}
		if rec.Kind == KindHalt {
			if !rec.Skipped(opt.Engine) {
				res.Halted = true
				break
			}
			continue
		}
		res.Counts.Records++
		if rec.Skipped(opt.Engine) {
			res.Counts.Skipped++
			continue
		}
		res.Counts.Run++
		if rec.Kind == KindInvalid {
			fr.fail(rec, "invalid record: "+rec.Err)
			continue
		}
		if setupErr != nil {
			fr.fail(rec, "setup failed: "+errText(setupErr))
			continue
		}
		if !opt.Deadline.IsZero() && time.Now().After(opt.Deadline) {
			fr.fail(rec, "not run: run deadline (-deadline) passed")
			continue
		}
		if opt.MaxTimeouts > 0 && res.Timeouts >= opt.MaxTimeouts {
			fr.fail(rec, fmt.Sprintf("not run: %d statements of this file timed out (-max-timeouts)", res.Timeouts))
			continue
		}
		if err := fr.connect(); err != nil {
			fr.fail(rec, errText(err))
			continue
		}
		var reason string
		if rec.Kind == KindStatement {
			reason = fr.runStatement(rec)
		} else {
			reason = fr.runQuery(rec)
		}
		if reason != "" {
			fr.fail(rec, reason)
		} else {
			res.Counts.Passed++
		}
	}

	// Drop the database, on the file's connection if it still works.
	if setupErr == nil && !opt.KeepDB {
		if fr.conn == nil {
			fr.reconnErr = 0
			_ = fr.connect()
		}
		if fr.conn != nil {
			if _, err := fr.exec("DROP DATABASE IF EXISTS " + dbName); err != nil {
				fmt.Fprintf(os.Stderr, "sltrun: %s: DROP DATABASE %s: %v\n", relPath, dbName, err)
			}
		}
	}
	fr.dropConn(false)
	return res
}

func (fr *fileRunner) runStatement(rec *Record) string {
	_, err := fr.exec(rec.SQL)
	if err != nil {
		fr.afterError(err)
		if errors.Is(err, errTimeout) {
			return "statement timeout after " + fr.opt.Timeout.String()
		}
		if rec.ExpectError {
			return ""
		}
		return "statement failed: " + errText(err)
	}
	if rec.ExpectError {
		return "statement succeeded but an error was expected"
	}
	return ""
}

func (fr *fileRunner) runQuery(rec *Record) string {
	res, err := fr.query(rec.SQL)
	if err != nil {
		fr.afterError(err)
		if errors.Is(err, errTimeout) {
			return "query timeout after " + fr.opt.Timeout.String()
		}
		return "query failed: " + errText(err)
	}
	if res.ncol != len(rec.Types) {
		return fmt.Sprintf("wrong number of result columns: expected %d but got %d", len(rec.Types), res.ncol)
	}
	vals := make([]string, len(res.vals))
	for i, v := range res.vals {
		vals[i] = Render(v, rec.Types[i%res.ncol])
	}
	return Compare(rec, vals)
}

// Compare checks rendered values against the record's expected result: the
// values are sorted as the record says, then compared one by one, or by
// count and md5 when the expected result is "N values hashing to H". It
// returns "" on a match and the reason otherwise. (sqllogictest.c picks the
// form from the hash threshold; the file was written with the same
// threshold, so comparing against the form the file uses is equivalent and
// needs no state. Counts are checked too, which sqllogictest.c forgets for
// unhashed results.)
func Compare(rec *Record, vals []string) string {
	SortValues(vals, len(rec.Types), rec.SortMode)
	if n, h, ok := rec.ExpectedHash(); ok {
		got := HashValues(vals)
		if n == len(vals) && h == got {
			return ""
		}
		return fmt.Sprintf("wrong result hash: expected %d values hashing to %s, got %d values hashing to %s%s",
			n, h, len(vals), got, sample(vals))
	}
	for i := 0; i < len(vals) && i < len(rec.Expected); i++ {
		if vals[i] != rec.Expected[i] {
			return fmt.Sprintf("wrong result: value #%d expected %q got %q%s", i+1, rec.Expected[i], vals[i], sample(vals))
		}
	}
	if len(vals) != len(rec.Expected) {
		return fmt.Sprintf("wrong result: expected %d values, got %d%s", len(rec.Expected), len(vals), sample(vals))
	}
	return ""
}

func sample(vals []string) string {
	const max = 12
	if len(vals) == 0 {
		return ""
	}
	s := vals
	more := ""
	if len(s) > max {
		s, more = s[:max], " ..."
	}
	return " [" + strings.Join(s, " ") + more + "]"
}
