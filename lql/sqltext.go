package lql

import (
	"errors"
	"strconv"
	"strings"
)

// SQL text: literals and identifiers. Everything that comes from the LQL
// text passes through quoteString or quoteIdent, which escape every byte
// that could end the token, so LQL input cannot inject SQL.

// quoteString writes a BigQuery single-quoted string literal.
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	writeEscaped(&b, s, '\'')
	b.WriteByte('\'')
	return b.String()
}

// quoteIdent returns s as is when it is a plain identifier that is not a
// reserved keyword, else quoted with backticks (`cloudflare.logs.prod`).
func quoteIdent(s string) string {
	if isPlainIdent(s) && !reservedWords[strings.ToUpper(s)] {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('`')
	writeEscaped(&b, s, '`')
	b.WriteByte('`')
	return b.String()
}

// writeEscaped escapes the backslash, the delimiter and control characters
// with BigQuery's escape sequences; other bytes (UTF-8 included) pass.
func writeEscaped(b *strings.Builder, s string, delim byte) {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == delim:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
}

func isPlainIdent(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	return allNameChars(s)
}

// literal writes an operand as a SQL literal.
func literal(v Value) (string, error) {
	switch v.Kind {
	case KindNull:
		return "NULL", nil
	case KindBool:
		if v.Bool {
			return "TRUE", nil
		}
		return "FALSE", nil
	case KindInt:
		return strconv.FormatInt(v.Int, 10), nil
	case KindFloat:
		s := strconv.FormatFloat(v.Float, 'g', -1, 64)
		if strings.ContainsAny(s, "IN") { // Inf, NaN
			return "", errors.New("lql: cannot write float " + s + " as SQL")
		}
		if !strings.ContainsAny(s, ".e") {
			s += ".0" // keep it a FLOAT64 literal
		}
		return s, nil
	case KindString:
		return quoteString(v.Str), nil
	case KindTimestamp:
		return "TIMESTAMP_MICROS(" + strconv.FormatInt(v.Int, 10) + ")", nil
	case KindDatetime:
		return "DATETIME(TIMESTAMP_MICROS(" + strconv.FormatInt(v.Int, 10) + "))", nil
	}
	return "", errors.New("lql: cannot write a " + v.Kind.String() + " value as SQL")
}

// reservedWords are BigQuery's reserved keywords; identifiers spelled like
// them are quoted.
var reservedWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`ALL AND ANY ARRAY AS ASC ASSERT_ROWS_MODIFIED AT BETWEEN BY CASE CAST
		COLLATE CONTAINS CREATE CROSS CUBE CURRENT DEFAULT DEFINE DESC DISTINCT ELSE END ENUM ESCAPE
		EXCEPT EXCLUDE EXISTS EXTRACT FALSE FETCH FOLLOWING FOR FROM FULL GROUP GROUPING GROUPS HASH
		HAVING IF IGNORE IN INNER INTERSECT INTERVAL INTO IS JOIN LATERAL LEFT LIKE LIMIT LOOKUP MERGE
		NATURAL NEW NO NOT NULL NULLS OF ON OR ORDER OUTER OVER PARTITION PRECEDING PROTO QUALIFY
		RANGE RECURSIVE RESPECT RIGHT ROLLUP ROWS SELECT SET SOME STRUCT TABLESAMPLE THEN TO TREAT
		TRUE UNBOUNDED UNION UNNEST USING WHEN WHERE WINDOW WITH WITHIN`) {
		m[w] = true
	}
	return m
}()
