package sql

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// Env is the state of one statement execution: its session, bound parameters, statement time, and the
// rows of enclosing queries for correlated subqueries.
type Env struct {
	s        exprSession
	ctx      context.Context
	params   []types.Value
	stmtTime time.Time
	outer    [][]types.Value
	subCache map[*subqueryExpr]*subResult
	reCache  map[string]*regexp.Regexp
	rows     int      // rows examined since the last cancellation check
	cmps     int      // sort comparisons, for the same (sortTick)
	t        *txn.Txn // overrides the session's transaction (DDL runs in its own)
	fkDepth  int      // nesting of foreign key cascades (fk.go)
	// divZeroErr makes a division by zero an error (strict INSERT/UPDATE with
	// ERROR_FOR_DIVISION_BY_ZERO).
	divZeroErr bool
	mem        *memory.Tracker // the statement's memory (memtrack.go); nil until it holds rows
}

func (env *Env) now() time.Time {
	if env.stmtTime.IsZero() {
		env.stmtTime = time.Now().In(env.s.Location())
	}
	return env.stmtTime
}

func (env *Env) warn(e *sqlerr.Error) { env.s.AddWarning("Warning", e.Code, e.Message) }

// divByZero reports a division by zero: warning 1365, or the error when a strict INSERT/UPDATE
// runs under ERROR_FOR_DIVISION_BY_ZERO (divZeroErr), as MySQL does.
func (env *Env) divByZero() error {
	if env.divZeroErr {
		return sqlerr.New(sqlerr.ErrDivisionByZero, "Division by 0")
	}
	env.s.AddWarning("Warning", sqlerr.ErrDivisionByZero, "Division by 0")
	return nil
}

// checkKilled returns an error once the statement was killed, its connection closed, or its
// max_execution_time passed. It is cheap enough to call per row.
func (env *Env) checkKilled() error {
	env.rows++
	if env.rows&63 != 0 {
		return nil
	}
	return env.interrupted()
}

func (env *Env) interrupted() error {
	if err := env.ctx.Err(); err != nil {
		if errors.Is(context.Cause(env.ctx), errTimeout) {
			return sqlerr.New(sqlerr.ErrQueryTimeout, "Query execution was interrupted, maximum statement execution time exceeded")
		}
		return sqlerr.New(sqlerr.ErrQueryInterrupted, "Query execution was interrupted")
	}
	return nil
}

var errTimeout = errors.New("max_execution_time exceeded")

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
	env.reCache[p] = re
	return re, nil
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x10
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
