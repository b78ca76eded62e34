// Command importcheck fails on any import inside the module that points up (or sideways) Kiln's
// layers: the rule table is rules.go, and docs/architecture.md shows it.
//
// Usage (from the module root; scripts/test.sh's lint step runs it):
//
//	go run ./tools/importcheck          # check non-test code; exit 1 on a violation
//	go run ./tools/importcheck -tests   # also check what _test.go files import
//	go run ./tools/importcheck -table   # print the rule table as markdown
//
// It reads the package graph from `go list -json ./...`, so it sees exactly what the build sees
// (build tags of the host). Test code is exempt by default: in-package tests sometimes drive a
// lower layer with a higher one's real implementation (repl's tests commit txn records); -tests
// reports those.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	tests := flag.Bool("tests", false, "also check the imports of _test.go files")
	table := flag.Bool("table", false, "print the rule table as markdown and exit")
	flag.Parse()
	if *table {
		fmt.Print(markdown(rules, externals))
		return
	}
	module, pkgs, err := listPackages(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "importcheck:", err)
		os.Exit(2)
	}
	vs := check(rules, externals, module, pkgs, *tests)
	for _, v := range vs {
		fmt.Println(v)
	}
	if len(vs) > 0 {
		fmt.Printf("importcheck: %d import(s) break the layer order (tools/importcheck/rules.go, docs/architecture.md)\n", len(vs))
		os.Exit(1)
	}
	fmt.Printf("importcheck: %d packages, imports point down\n", len(pkgs))
}

// listPackages runs go list in dir and returns the module path and its packages.
func listPackages(dir string) (string, []pkg, error) {
	cmd := exec.Command("go", "list", "-m")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m: %w", err)
	}
	module := strings.TrimSpace(string(out))
	cmd = exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return module, pkgs, nil
}
