package expr

import (
	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/sysvar"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// MinMaxAllowedPacket is max_allowed_packet's smallest setting: results up to this size never
// need the session's limit looked up.
const MinMaxAllowedPacket = 1024

// MaxAllowedPacket is the session's max_allowed_packet, the bound of every value a function or an
// aggregate builds.
func (env *Env) MaxAllowedPacket() int64 {
	return types.ToIntLenient(env.Sess.SysVar(sysvar.Must("max_allowed_packet"), false))
}

// ResultTooLarge reports whether a result of n bytes from function name passes max_allowed_packet,
// and then records warning 1301: MySQL returns NULL with that warning.
func (env *Env) ResultTooLarge(name string, n int64) bool {
	limit := env.MaxAllowedPacket()
	if n <= limit {
		return false
	}
	env.Warn(sqlerr.New(sqlerr.ErrWarnAllowedPacketOverflow, builtins.ErrResultTooLarge, builtins.FuncSQLName(name), limit))
	return true
}

// ArgsSize is the bytes a function's arguments take as text: a lower bound of what a builder of
// them (JSON_ARRAY, JSON_OBJECT, JSON_SET...) produces, checked before it builds anything.
func ArgsSize(vs []types.Value) int64 {
	var n int64
	for i := range vs {
		n += builtins.ValueSize(vs[i])
	}
	return n
}
