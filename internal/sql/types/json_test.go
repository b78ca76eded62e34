package types

import "testing"

func TestJSONPaths(t *testing.T) {
	doc := `{"a": {"b": [10, 20, {"c": 1}]}, "x y": 5, "z": [1, 2, 3, 4]}`
	for _, c := range []struct {
		path, want string
		wild       bool
		bad        bool
	}{
		{path: "$", want: `[{"a": {"b": [10, 20, {"c": 1}]}, "z": [1, 2, 3, 4], "x y": 5}]`},
		{path: "$.a.b[1]", want: `[20]`},
		{path: `$."x y"`, want: `[5]`},
		{path: "$.a.b[last]", want: `[{"c": 1}]`},
		{path: "$.a.b[last-2]", want: `[10]`},
		{path: "$.z[1 to 2]", want: `[2, 3]`, wild: true},
		{path: "$.z[*]", want: `[1, 2, 3, 4]`, wild: true},
		{path: "$.*", want: `[{"b": [10, 20, {"c": 1}]}, [1, 2, 3, 4], 5]`, wild: true},
		{path: "$**.c", want: `[1]`, wild: true},
		{path: "$.nope", want: `[]`},
		{path: "$.a.b[9]", want: `[]`},
		{path: "$.x y", bad: true},
		{path: "a", bad: true},
		{path: "$[", bad: true},
		{path: "$**", bad: true},
	} {
		p, err := ParseJSONPath(c.path)
		if c.bad {
			if err == nil {
				t.Errorf("%s: parsed, want error", c.path)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		v, err := ParseJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Find(v)
		if got == nil {
			got = []any{}
		}
		if s := JSONText(got); s != c.want {
			t.Errorf("%s: got %s, want %s", c.path, s, c.want)
		}
		if p.Wild() != c.wild {
			t.Errorf("%s: wild %v", c.path, p.Wild())
		}
	}
}

func TestJSONNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"b":1,"a":2,"aa":3}`, `{"a": 2, "b": 1, "aa": 3}`},
		{`{"a":1,"a":2}`, `{"a": 2}`},
		{`[1.0, 1e2, 1.5e300, -0.25, 18446744073709551615, "é\n"]`, `[1.0, 100.0, 1.5e300, -0.25, 18446744073709551615, "é\n"]`},
		{` true `, `true`},
	} {
		got, err := NormalizeJSON(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: got %s (%v), want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `{`, `[1,]`, `1 2`, `{"a" 1}`, `nul`} {
		if _, err := NormalizeJSON(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestJSONModify(t *testing.T) {
	for _, c := range []struct {
		doc, path, val string
		mode           JSONModify
		want           string
	}{
		{`{"a":1}`, "$.b", "2", JSONSet, `{"a": 1, "b": 2}`},
		{`{"a":1}`, "$.a", "2", JSONInsert, `{"a": 1}`},
		{`{"a":1}`, "$.b", "2", JSONReplace, `{"a": 1}`},
		{`[1]`, "$[5]", "2", JSONSet, `[1, 2]`},
		{`1`, "$[1]", "2", JSONInsert, `[1, 2]`},
		{`{"a":{"b":1}}`, "$.a.b", "[3]", JSONSet, `{"a": {"b": [3]}}`},
	} {
		d, _ := ParseJSON(c.doc)
		v, _ := ParseJSON(c.val)
		p, err := ParseJSONPath(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := JSONText(p.Modify(d, v, c.mode)); got != c.want {
			t.Errorf("%s %s: got %s, want %s", c.doc, c.path, got, c.want)
		}
	}
}
