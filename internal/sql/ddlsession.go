package sql

import (
	"strings"

	"github.com/kiln-db/kiln/internal/sql/ddl"
	"github.com/kiln-db/kiln/internal/sql/infoschema"
	"github.com/kiln-db/kiln/internal/sql/plan"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// ddlSession is the session as DDL sees it (its ddl.Session): a defined type over Session, like
// planSession and dmlSession, so ddl's methods do not join Session's own API and converting costs
// nothing per statement.
type ddlSession Session

var _ ddl.Session = (*ddlSession)(nil)

// ddlSess returns the session as ddl's Session.
func (s *Session) ddlSess() *ddlSession { return (*ddlSession)(s) }

func (d *ddlSession) sess() *Session                   { return (*Session)(d) }
func (d *ddlSession) Plan() plan.Context               { return d.sess().planContext() }
func (d *ddlSession) SQLModeHas(flag string) bool      { return d.sess().sqlModeHas(flag) }
func (d *ddlSession) Strict() bool                     { return d.sess().strict() }
func (d *ddlSession) UserName() string                 { return d.User }
func (d *ddlSession) Definer() (user, host string)     { return d.acctUser, d.acctHost }
func (d *ddlSession) SystemLogTable(db, n string) bool { return infoschema.SystemLogTable(db, n) != "" }
func (d *ddlSession) AddWarning(level string, code uint16, msg string) {
	d.sess().addWarning(level, code, msg)
}

// FKChecks is foreign_key_checks.
func (d *ddlSession) FKChecks() bool {
	b, _ := types.ToBool(d.sess().getSysVar(sysvar.Must("foreign_key_checks"), false))
	return b
}

// CheckDefiner is the privilege check of CREATE VIEW's DEFINER clause: another account than the
// session's own needs SET_USER_ID (or SUPER), as in MySQL.
func (d *ddlSession) CheckDefiner(user, host string) error {
	self := user == d.acctUser && strings.EqualFold(host, d.acctHost)
	if !self && !d.sess().hasAdmin("SET_USER_ID") {
		return specificDenied("SUPER or SET_USER_ID")
	}
	return nil
}

// Resolve plans through the session's resolve (plancontext.go), which takes the locks afterwards.
func (d *ddlSession) Resolve(build func(p *plan.Planner) error) error {
	return d.sess().resolve(build)
}

// HoldMetadataLocks marks the DDL's exclusively locked databases as held in the session's shared
// lock set (s.mdl), so the locks taken after planning (lockUses) do not wait on them; release
// unmarks the ones it marked.
func (d *ddlSession) HoldMetadataLocks(dbs []string) (release func()) {
	var marked []string
	for _, n := range dbs {
		if !d.mdl[n] {
			if d.mdl == nil {
				d.mdl = map[string]bool{}
			}
			d.mdl[n] = true
			marked = append(marked, n)
		}
	}
	return func() {
		for _, n := range marked {
			delete(d.mdl, n)
		}
	}
}
