package parser

import (
	"errors"
	"testing"
)

// FuzzParse checks that no input makes the parser, the validator, the
// sandbox merge or the walker panic, that every error is one of the
// package's error types, and that whatever parses round-trips through
// Format to an Equal tree.
//
//	go test ./sql/parser -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	for _, sql := range allTestSQL() {
		f.Add(sql)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 64<<10 {
			t.Skip("larger inputs only exercise MaxInputBytes")
		}
		_, err := ParseStatements(sql)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("ParseStatements error %T %v, want *Error", err, err)
			}
		}
		checkRoundTrip(t, sql)
		checkHeightBound(t, sql)

		if q, err := Validate(sql, supabaseOpts); err == nil {
			_ = Parameters(q)
			Rewrite(q, Rewriter{Expr: func(e Expr) Expr { return e }})
		} else {
			var perr *Error
			var verr *ValidationError
			if !errors.As(err, &perr) && !errors.As(err, &verr) {
				t.Fatalf("Validate error %T %v", err, err)
			}
		}
		if res, err := Sandbox(sandboxEndpoint, sql, supabaseOpts); err == nil {
			if _, err := Parse(Format(res.Query)); err != nil {
				t.Fatalf("merged sandbox query does not parse: %v", err)
			}
		}
	})
}
