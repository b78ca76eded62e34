package main

import (
	"fmt"
	"slices"
	"strings"
)

// pkg is what the check needs of one package (the fields of `go list -json` it reads).
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// violation is one import the rules do not allow, or a package the table does not place.
type violation struct {
	From, To string // import paths relative to the module; To is "" for an unplaced package
	Test     bool   // the import is made by the package's tests
	Reason   string
}

func (v violation) String() string {
	if v.To == "" {
		return fmt.Sprintf("%s: %s", v.From, v.Reason)
	}
	from := v.From
	if v.Test {
		from += " (tests)"
	}
	return fmt.Sprintf("%s imports %s: %s", from, v.To, v.Reason)
}

// matches reports whether rel (a path relative to the module) is one of patterns.
func matches(patterns []string, rel string) bool {
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if rel == base || strings.HasPrefix(rel, base+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// layerOf returns the first layer of table that holds rel, or nil.
func layerOf(table []layer, rel string) *layer {
	for i := range table {
		if matches(table[i].Packages, rel) {
			return &table[i]
		}
	}
	return nil
}

// allowed says whether a package of layer from at path fromRel may import toRel of layer to; test
// says the import is made by test code.
func allowed(from *layer, fromRel string, to *layer, toRel string, test bool) bool {
	if to.TestHelper {
		// Only tests (and programs, which are test drivers and tools) use test helpers.
		return test || slices.Contains(from.MayImport, "*")
	}
	if slices.Contains(from.MayImport, "*") || slices.Contains(from.MayImport, to.Name) {
		return true
	}
	if from == to && from.Peers {
		return true
	}
	// A package may use the packages below its own path (a test's own package is covered here too).
	return toRel == fromRel || strings.HasPrefix(toRel, fromRel+"/")
}

// externalRule returns the rule of externals that covers path, if any.
func externalRule(exts []external, path string) *external {
	for i := range exts {
		x := &exts[i]
		if matches([]string{x.Prefix + "/..."}, path) && !matches(x.Except, path) {
			return x
		}
	}
	return nil
}

// check applies table and externals to pkgs of module; withTests also checks the imports of test
// files.
func check(table []layer, exts []external, module string, pkgs []pkg, withTests bool) []violation {
	rel := func(path string) (string, bool) {
		if path == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	var out []violation
	for _, p := range pkgs {
		fromRel, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		from := layerOf(table, fromRel)
		if from == nil {
			out = append(out, violation{From: fromRel, Reason: "not in the rule table (tools/importcheck/rules.go): place it in a layer"})
			continue
		}
		add := func(imports []string, test bool) {
			for _, imp := range imports {
				toRel, ok := rel(imp)
				if !ok {
					if x := externalRule(exts, imp); x != nil && !slices.Contains(x.Layers, from.Name) && !slices.Contains(from.MayImport, "*") {
						out = append(out, violation{From: fromRel, To: imp, Test: test,
							Reason: fmt.Sprintf("%s (imported only by layers %s)", x.Why, strings.Join(x.Layers, ", "))})
					}
					continue
				}
				to := layerOf(table, toRel)
				switch {
				case to == nil:
					out = append(out, violation{From: fromRel, To: toRel, Test: test, Reason: "the imported package is not in the rule table"})
				case !allowed(from, fromRel, to, toRel, test):
					out = append(out, violation{From: fromRel, To: toRel, Test: test,
						Reason: fmt.Sprintf("layer %s may not import layer %s (may import: %s)", from.Name, to.Name, mayImportText(from))})
				}
			}
		}
		add(p.Imports, false)
		if withTests {
			add(p.TestImports, true)
			add(p.XTestImports, true)
		}
	}
	return out
}

func mayImportText(l *layer) string {
	names := slices.Clone(l.MayImport)
	if l.Peers {
		names = append(names, "itself")
	}
	if len(names) == 0 {
		return "nothing in the module"
	}
	return strings.Join(names, ", ")
}

// markdown renders table and externals for docs/architecture.md.
func markdown(table []layer, exts []external) string {
	var b strings.Builder
	b.WriteString("| layer | packages | may import | owns |\n|---|---|---|---|\n")
	for _, l := range table {
		may := mayImportText(&l)
		if slices.Contains(l.MayImport, "*") {
			may = "everything"
		}
		if l.TestHelper {
			may += " (imported by test code only)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", l.Name, strings.Join(l.Packages, ", "), may, l.Owns)
	}
	b.WriteString("\nLibraries confined to layers:\n")
	for _, x := range exts {
		fmt.Fprintf(&b, "- %s", x.Prefix)
		if len(x.Except) > 0 {
			fmt.Fprintf(&b, " (not %s)", strings.Join(x.Except, ", "))
		}
		fmt.Fprintf(&b, ": layers %s; %s\n", strings.Join(x.Layers, ", "), x.Why)
	}
	return b.String()
}
