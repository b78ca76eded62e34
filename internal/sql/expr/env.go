package expr

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Env is the state of one statement execution: its session, bound parameters, statement time, and the
// rows of enclosing queries for correlated subqueries.
type Env struct {
	Sess     Session         // the session the statement runs in
	Ctx      context.Context // cancelled by KILL, max_execution_time, a closed connection
	Params   []types.Value   // the bound placeholders (Param reads them)
	stmtTime time.Time
	outer    [][]types.Value
	subCache map[*Subquery]*subResult
	reCache  map[string]*regexp.Regexp
	rows     int      // rows examined since the last cancellation check
	cmps     int      // sort comparisons, for the same (SortTick)
	Txn      *txn.Txn // overrides the session's transaction (DDL runs in its own)
	FKDepth  int      // nesting of foreign key cascades (the facade's fk.go)
	// DivZeroErr makes a division by zero an error (strict INSERT/UPDATE with
	// ERROR_FOR_DIVISION_BY_ZERO).
	DivZeroErr bool
	Mem        *memory.Tracker // the statement's memory (memtrack.go); nil until it holds rows
	// work holds, per recursive CTE being run, the rows its recursive members read (the previous
	// iteration's), so the plan itself stays immutable. Nil unless the statement has one.
	work map[any][][]types.Value
}

// WorkRows is the current working table of the recursive CTE keyed by k (exec.WorkTable).
func (env *Env) WorkRows(k any) [][]types.Value { return env.work[k] }

// SetWorkRows sets the working table of the recursive CTE keyed by k; nil drops it.
func (env *Env) SetWorkRows(k any, rows [][]types.Value) {
	if rows == nil {
		delete(env.work, k)
		return
	}
	if env.work == nil {
		env.work = map[any][][]types.Value{}
	}
	env.work[k] = rows
}

// Now is the statement's time in the session time zone: read once, so every NOW() of a statement
// agrees.
func (env *Env) Now() time.Time {
	if env.stmtTime.IsZero() {
		env.stmtTime = time.Now().In(env.Sess.Location())
	}
	return env.stmtTime
}

// Warn adds e as a warning of the statement.
func (env *Env) Warn(e *sqlerr.Error) { env.Sess.AddWarning("Warning", e.Code, e.Message) }

// divByZero reports a division by zero: warning 1365, or the error when a strict INSERT/UPDATE
// runs under ERROR_FOR_DIVISION_BY_ZERO (divZeroErr), as MySQL does.
func (env *Env) divByZero() error {
	if env.DivZeroErr {
		return sqlerr.New(sqlerr.ErrDivisionByZero, "Division by 0")
	}
	env.Sess.AddWarning("Warning", sqlerr.ErrDivisionByZero, "Division by 0")
	return nil
}

// CheckKilled returns an error once the statement was killed, its connection closed, or its
// max_execution_time passed. It is cheap enough to call per row.
func (env *Env) CheckKilled() error {
	env.rows++
	if env.rows&63 != 0 {
		return nil
	}
	return env.Interrupted()
}

// Interrupted returns the error a killed, closed or timed-out statement ends with (nil while it
// runs).
func (env *Env) Interrupted() error {
	if err := env.Ctx.Err(); err != nil {
		if errors.Is(context.Cause(env.Ctx), ErrTimeout) {
			return sqlerr.New(sqlerr.ErrQueryTimeout, "Query execution was interrupted, maximum statement execution time exceeded")
		}
		return sqlerr.New(sqlerr.ErrQueryInterrupted, "Query execution was interrupted")
	}
	return nil
}

var ErrTimeout = errors.New("max_execution_time exceeded")

func (env *Env) regexp(p string) (*regexp.Regexp, error) {
	if env.reCache == nil {
		env.reCache = map[string]*regexp.Regexp{}
	}
	if re, ok := env.reCache[p]; ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	// The pattern may be a column's value in a buffer the next row overwrites (exec's streaming
	// reads): the key is a copy.
	env.reCache[strings.Clone(p)] = re
	return re, nil
}

// NewUUID is UUID(): random bytes with the version (1) and RFC 4122 variant bits set.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x10
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
