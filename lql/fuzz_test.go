package lql

import (
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics; what it accepts encodes, re-parses to an
// equal Query, and translates to SQL in which the input cannot escape its
// literals. Seeded with every input of this package's tests.
func FuzzParse(f *testing.F) {
	for _, c := range filterCases {
		f.Add(c.in)
	}
	for _, c := range queryCases {
		f.Add(c.in)
	}
	for _, c := range errorCases {
		if len(c.in) <= 4096 {
			f.Add(c.in)
		}
	}
	for _, c := range schemaCases {
		f.Add(c.in)
	}
	for _, c := range schemaErrorCases {
		f.Add(c.in)
	}
	for _, c := range canonicalCases {
		f.Add(c.in)
	}
	for _, c := range sqlCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, opts := range []Options{testOpts, schemaOpts} {
			q, err := Parse(in, opts)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("Parse(%q) error %T, want *Error", in, err)
				}
				continue
			}
			enc, err := Encode(q)
			if err != nil {
				t.Fatalf("Encode(Parse(%q)): %v", in, err)
			}
			q2, err := parse(enc, opts, 8*MaxQueryBytes)
			if err != nil {
				t.Fatalf("re-parse of %q (from %q): %v", enc, in, err)
			}
			if !reflect.DeepEqual(q, q2) {
				t.Fatalf("round trip of %q via %q\n got %+v\nwant %+v", in, enc, q2, q)
			}
			if sql, err := ToSQL(q, "src", SQLOptions{Limit: 10}); err == nil {
				checkNoInjection(t, sql)
			}
			if sql, err := ForSandbox(q, []string{"a", "b"}); err == nil {
				checkNoInjection(t, sql)
			}
		}
	})
}

// FuzzQuoteString: every string survives SQL quoting unchanged.
func FuzzQuoteString(f *testing.F) {
	for _, s := range []string{"", "it's", `a\b`, "\x00\n\t'`\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := unquoteSQL(quoteString(s))
		if !ok || got != s {
			t.Fatalf("quoteString(%q) = %s decodes to %q, %v", s, quoteString(s), got, ok)
		}
	})
}
