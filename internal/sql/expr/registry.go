package expr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kiln-db/kiln/internal/sql/builtins"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// Builtin is one SQL function of the registry: its name, how many arguments it takes, its result
// type and the constructor that builds its expression from the compiled arguments.
type Builtin struct {
	Name    string // lower case: the parser's FnName.L
	MinArgs int
	MaxArgs int // -1: no upper bound
	// ArgStep > 1 says the argument counts past MinArgs come in steps (JSON_OBJECT's key/value
	// pairs, JSON_SET's path/value pairs): any other count is error 1582 too.
	ArgStep int
	// Type is the result-type rule when the type follows from the arguments alone; Build finds it
	// in Call.Type. Nil: Build works the type out itself (it depends on a constant argument's value,
	// the connection's collation or the charset of a USING clause).
	Type func(args []Expr) types.ColType
	// Build makes the expression. The arity is checked before it is called.
	Build func(c *Call) (Expr, error)
}

// Call is one function call as the binder hands it to a constructor: the compiled arguments and
// what the parser gives some functions outside their argument list.
type Call struct {
	Name    string // lower case, the registry's key
	Written string // as the user wrote it: 1582 and 1305 quote it
	Args    []Expr // compiled, without the parser's unit, direction and selector nodes
	Type    types.ColType
	// Unit is the time unit of DATE_ADD, EXTRACT, TIMESTAMPDIFF, TIMESTAMPADD... (upper case; ""
	// when the call has none).
	Unit string
	// TrimLeading and TrimTrailing are TRIM's direction (both for BOTH or none given).
	TrimLeading, TrimTrailing bool
	// FormatSelector is GET_FORMAT's first argument: DATE, TIME or DATETIME ("" when absent).
	FormatSelector string
	// ConnCollation is collation_connection: the collation of operands that have none of their own.
	ConnCollation *types.Collation
}

func init() {
	// The functions this package defines, then the library's for every name still free: an entry
	// of a register function overrides the library's function of the same name.
	registerControl()
	registerSpecial()
	registerJSON()
	registerRegexp()
	registerLibrary()
}

// registry holds every builtin by name. It is filled by init functions (this package's, and
// Register calls of the layers that own a function's state, such as the facade's user locks) and
// only read afterwards.
var registry = map[string]*Builtin{}

// Register adds functions to the registry. It panics on a name registered twice: two definitions
// of one function would make the result depend on init order.
func Register(bs ...Builtin) {
	for i := range bs {
		b := bs[i]
		if _, dup := registry[b.Name]; dup {
			panic(fmt.Sprintf("expr: builtin %q registered twice", b.Name))
		}
		if b.ArgStep == 0 {
			b.ArgStep = 1
		}
		registry[b.Name] = &b
	}
}

// alias registers b under each name.
func alias(b Builtin, names ...string) []Builtin {
	out := make([]Builtin, len(names))
	for i, n := range names {
		out[i] = b
		out[i].Name = n
	}
	return out
}

// LookupBuiltin returns the registered function name (lower case).
func LookupBuiltin(name string) (*Builtin, bool) {
	b, ok := registry[name]
	return b, ok
}

// BuiltinNames lists the registry (sorted).
func BuiltinNames() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// AcceptsArgs reports whether n arguments are a valid count for b.
func (b *Builtin) AcceptsArgs(n int) bool {
	if n < b.MinArgs || (b.MaxArgs >= 0 && n > b.MaxArgs) {
		return false
	}
	return (n-b.MinArgs)%b.ArgStep == 0
}

// BindBuiltin builds the expression of a function call: 1305 for an unknown name, 1582 for a
// wrong argument count (both naming the function as written), else the function's constructor.
func BindBuiltin(c *Call) (Expr, error) {
	b, ok := registry[c.Name]
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrSpDoesNotExist, "FUNCTION %s does not exist", c.Written)
	}
	if !b.AcceptsArgs(len(c.Args)) {
		return nil, sqlerr.New(sqlerr.ErrWrongParamCount, "Incorrect parameter count in the call to native function '%s'", c.Written)
	}
	if byteFuncs[c.Name] {
		for i, a := range c.Args {
			if isLatin1(a.Type()) {
				c.Args[i] = &latin1Octets{Typed: Typed{T: binaryOf(a.Type())}, E: a}
			}
		}
	}
	if b.Type != nil {
		c.Type = b.Type(c.Args)
	}
	return b.Build(c)
}

// byteFuncs are the functions that read a string's bytes (its length in bytes, its hex digits,
// its hash): of a latin1 value, the latin1 bytes, one per character, as MySQL stores it. Kiln
// holds latin1 text as UTF-8, so these functions read it through latin1Octets.
var byteFuncs = map[string]bool{
	"length": true, "octet_length": true, "bit_length": true, "hex": true, "md5": true, "sha": true,
	"sha1": true, "sha2": true, "crc32": true, "to_base64": true,
}

func isLatin1(t types.ColType) bool {
	return t.IsString() && (t.Charset == "latin1" || strings.HasPrefix(t.Collation, "latin1_"))
}

func binaryOf(t types.ColType) types.ColType {
	t.Charset, t.Collation = "binary", "binary"
	return t
}

// latin1Octets is a latin1 string as its latin1 bytes.
type latin1Octets struct {
	Typed
	E Expr
}

func (l *latin1Octets) Eval(env *Env, row []types.Value) (types.Value, error) {
	v, err := l.E.Eval(env, row)
	if err != nil || v.K != types.KindString {
		return v, err
	}
	return types.NewBytes(types.Latin1Encode(v.S)), nil
}

// fixed is the type rule of a function whose result type does not depend on its arguments.
func fixed(t types.ColType) func([]Expr) types.ColType {
	return func([]Expr) types.ColType { return t }
}

// pure builds a function of the builtins library: its arguments evaluated, then the Go function.
func (c *Call) pure() (Expr, error) {
	var coll *types.Collation
	if builtins.FuncUsesCollation(c.Name) {
		coll = c.collationOf(c.Args...)
	}
	f, _, _, ok := builtins.LookupFuncCollation(c.Name, coll)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErrSpDoesNotExist, "FUNCTION %s does not exist", c.Written)
	}
	t := c.Type
	if b := registry[c.Name]; b.Type == nil {
		t = FuncType(c.Name, c.Args) // TRIM(s), WEEK(d, mode): an entry of its own builds the other forms
	}
	return NewFunc(t, c.Name, f, c.Args), nil
}

// collationOf is CollationOf under the call's connection collation.
func (c *Call) collationOf(es ...Expr) *types.Collation { return CollationOf(c.ConnCollation, es...) }

// libraryType is FuncType for one name.
func libraryType(name string) func([]Expr) types.ColType {
	return func(args []Expr) types.ColType { return FuncType(name, args) }
}

// registerLibrary registers each function of the builtins library that no other entry defines,
// with the library's arity.
func registerLibrary() {
	for _, name := range builtins.FuncNames() {
		if _, ok := registry[name]; ok {
			continue
		}
		_, lo, hi, _ := builtins.LookupFunc(name)
		Register(Builtin{Name: name, MinArgs: lo, MaxArgs: hi, Type: libraryType(name), Build: (*Call).pure})
	}
}
