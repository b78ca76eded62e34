package sql

import (
	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// minMaxAllowedPacket is max_allowed_packet's smallest setting: results up to this size never
// need the session's limit looked up.
const minMaxAllowedPacket = 1024

// maxAllowedPacket is the session's max_allowed_packet, the bound of every value a function or an
// aggregate builds.
func (env *Env) maxAllowedPacket() int64 {
	return toIntLenient(env.s.SysVar(sysvar.Must("max_allowed_packet"), false))
}

// resultTooLarge reports whether a result of n bytes from function name passes max_allowed_packet,
// and then records warning 1301: MySQL returns NULL with that warning.
func (env *Env) resultTooLarge(name string, n int64) bool {
	limit := env.maxAllowedPacket()
	if n <= limit {
		return false
	}
	env.warn(sqlerr.New(sqlerr.ErrWarnAllowedPacketOverflow, builtins.ErrResultTooLarge, builtins.FuncSQLName(name), limit))
	return true
}

// argsSize is the bytes a function's arguments take as text: a lower bound of what a builder of
// them (JSON_ARRAY, JSON_OBJECT, JSON_SET...) produces, checked before it builds anything.
func argsSize(vs []types.Value) int64 {
	var n int64
	for i := range vs {
		n += builtins.ValueSize(vs[i])
	}
	return n
}
