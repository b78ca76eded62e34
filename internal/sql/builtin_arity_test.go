package sql

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// builtinArityFile records, for every function name the binder knows (and the names the parser
// gives special forms), how a call with 0..7 arguments binds: ok, arity (error 1582 naming the
// function as written), arity-lc (1582 naming it in lower case), nofunc (1305), parse (not
// reachable by the plain call syntax) or panic. It was generated from the binder before the
// builtin registry replaced its chain of switches, so a diff of the file shows every change the
// registry made. KILN_UPDATE_BUILTIN_ARITY=1 rewrites it.
const builtinArityFile = "expr/testdata/builtin_arity.txt"

// TestBuiltinArity binds SELECT NAME(1, ...) for each recorded name and argument count (the name
// in upper case, so that 1582's message shows it as the user wrote it) and compares.
func TestBuiltinArity(t *testing.T) {
	db := testDB(t)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	b, err := os.ReadFile(builtinArityFile)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name := strings.Fields(line)[0]
		fmt.Fprintf(&out, "%s", name)
		for argc := 0; argc <= 7; argc++ {
			fmt.Fprintf(&out, " %d:%s", argc, bindCall(s, name, argc))
		}
		got := out.String()[strings.LastIndexByte(strings.TrimSuffix(out.String(), "\n"), '\n')+1:]
		if got != line && os.Getenv("KILN_UPDATE_BUILTIN_ARITY") == "" {
			t.Errorf("binding %s:\n got  %s\n want %s", name, got, line)
		}
		out.WriteString("\n")
	}
	if os.Getenv("KILN_UPDATE_BUILTIN_ARITY") != "" {
		if err := os.WriteFile(builtinArityFile, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// bindCall prepares SELECT NAME(1, ..., 1) with argc arguments and classifies the outcome.
func bindCall(s *Session, name string, argc int) (res string) {
	defer func() {
		if p := recover(); p != nil {
			res = "panic"
		}
	}()
	args := make([]string, argc)
	for i := range args {
		args[i] = "1"
	}
	written := strings.ToUpper(name)
	_, err := s.Prepare(context.Background(), "SELECT "+written+"("+strings.Join(args, ", ")+")")
	if err == nil {
		return "ok"
	}
	switch e := sqlerr.As(err); e.Code {
	case sqlerr.ErrWrongParamCount:
		if e.Message != "Incorrect parameter count in the call to native function '"+written+"'" {
			return "arity-lc"
		}
		return "arity"
	case sqlerr.ErrSpDoesNotExist:
		return "nofunc"
	case sqlerr.ErrParse, sqlerr.ErrSyntax:
		return "parse"
	}
	return "ok" // bound; the error (if any) is the function's own
}

// TestBuiltinRegistry checks every entry of the registry (the facade's user locks included): one
// argument too few and one too many (and, for functions taking pairs, a count between steps) give
// 1582 naming the function as written; the bounds themselves bind. Every registered name is in
// builtinArityFile, and every name the file records as bound by some argument count is registered,
// so no function the switches accepted before the registry was lost.
func TestBuiltinRegistry(t *testing.T) {
	args := func(n int) []expr.Expr {
		out := make([]expr.Expr, n)
		for i := range out {
			out[i] = expr.NewConst(types.NewInt(1))
		}
		return out
	}
	conn, _ := types.LookupCollation("utf8mb4_0900_ai_ci")
	bind := func(name string, n int) error {
		written := strings.ToUpper(name)
		_, err := expr.BindBuiltin(&expr.Call{Name: name, Written: written, Args: args(n), TrimLeading: true, TrimTrailing: true,
			Unit: "DAY", FormatSelector: "DATE", ConnCollation: conn})
		return err
	}
	isArity := func(name string, err error) bool {
		if err == nil {
			return false
		}
		e := sqlerr.As(err)
		return e.Code == sqlerr.ErrWrongParamCount &&
			e.Message == "Incorrect parameter count in the call to native function '"+strings.ToUpper(name)+"'"
	}
	for _, name := range expr.BuiltinNames() {
		b, _ := expr.LookupBuiltin(name)
		var bad, good []int
		if b.MinArgs > 0 {
			bad = append(bad, b.MinArgs-1)
		}
		good = append(good, b.MinArgs)
		if b.MaxArgs >= 0 {
			bad = append(bad, b.MaxArgs+1)
			good = append(good, b.MaxArgs)
		}
		if b.ArgStep > 1 {
			bad = append(bad, b.MinArgs+1)
			good = append(good, b.MinArgs+b.ArgStep)
		}
		for _, n := range bad {
			if err := bind(name, n); !isArity(name, err) {
				t.Errorf("%s with %d arguments: got %v, want error 1582", name, n, err)
			}
		}
		for _, n := range good {
			if err := bind(name, n); isArity(name, err) || (err != nil && sqlerr.As(err).Code == sqlerr.ErrSpDoesNotExist) {
				t.Errorf("%s with %d arguments: got %v, want it bound", name, n, err)
			}
		}
	}
	if err := bind("no_such_function", 0); err == nil || sqlerr.As(err).Code != sqlerr.ErrSpDoesNotExist {
		t.Errorf("unknown function: got %v, want error 1305", err)
	}

	b, err := os.ReadFile(builtinArityFile)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name := strings.Fields(line)[0]
		recorded[name] = true
		_, registered := expr.LookupBuiltin(name)
		if bound := strings.Contains(line, ":ok") || strings.Contains(line, ":arity"); bound && !registered {
			t.Errorf("%s was accepted before the registry but is not registered", name)
		}
	}
	for _, name := range expr.BuiltinNames() {
		if !recorded[name] && name != expr.LiteralDate && name != expr.LiteralTime && name != expr.LiteralTimestamp {
			t.Errorf("%s is registered but not recorded in %s", name, builtinArityFile)
		}
	}
}
