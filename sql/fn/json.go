package fn

import (
	"fmt"
	"github.com/sediment/sediment/internal/jsonstr"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
)

// JSON functions. JSON values are JSON text; extraction scans the text
// lazily (no tree is built) and skips what the path does not visit.
//
// JSONPath: $ (the root), .name, ."quoted name", ['name'], ["name"], [n].
// Both the standard functions (JSON_VALUE, JSON_QUERY, ...) and the legacy
// ones (JSON_EXTRACT, JSON_EXTRACT_SCALAR, ...) accept every form.
//
// The first argument may be STRING (results are STRING), JSON (results of
// JSON_QUERY are JSON) or a record (RowRef, materialised as JSON text).
// Text that cannot be scanned up to the value yields NULL; the text after
// the value found is not validated (scanning stops there).

// maxJSONDepth bounds nesting for validation; maxPrettyIndent the levels
// of indentation TO_JSON_STRING(x, true) writes.
const (
	maxJSONDepth    = 1000
	maxPrettyIndent = 64
)

func init() {
	register("json_value", bindJSONExtract(jsonScalar, true), "json_extract_scalar")
	register("json_query", bindJSONExtract(jsonQuery, false))
	register("json_extract", bindJSONExtract(jsonQuery, false))
	register("json_value_array", bindJSONArray(true), "json_extract_string_array")
	register("json_query_array", bindJSONArray(false), "json_extract_array")
	register("to_json_string", bindToJSON(vec.String))
	register("to_json", bindToJSON(vec.JSON))
	register("parse_json", bindParseJSON)
	register("json_type", bindJSONType)
	register("string", bindJSONConvert(vec.String))
	register("int64", bindJSONConvert(vec.Int64))
	register("float64", bindJSONConvert(vec.Float64))
	register("bool", bindJSONConvert(vec.Bool))
}

// ---- scanning ----

func skipWS(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString scans the string starting at s[i] == '"' and returns the index
// after its closing quote and whether it holds escapes.
func scanString(s string, i int) (end int, escaped, ok bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped, true
		}
	}
	return 0, false, false
}

// skipValue returns the index after the value starting at s[i]. Containers
// are skipped by counting brackets (their insides are not validated).
func skipValue(s string, i int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch c := s[i]; c {
	case '"':
		e, _, ok := scanString(s, i)
		return e, ok
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				e, _, ok := scanString(s, j)
				if !ok {
					return 0, false
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	case 't':
		return literalEnd(s, i, "true")
	case 'f':
		return literalEnd(s, i, "false")
	case 'n':
		return literalEnd(s, i, "null")
	default:
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
			j++
		}
		return j, j > i
	}
}

func literalEnd(s string, i int, lit string) (int, bool) {
	if strings.HasPrefix(s[i:], lit) {
		return i + len(lit), true
	}
	return 0, false
}

// unquoteJSON decodes a JSON string literal (with its quotes).
func unquoteJSON(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if strings.IndexByte(body, '\\') < 0 {
		return body, true
	}
	b := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			b = append(b, body[i])
			i++
			continue
		}
		out, n, _ := jsonstr.AppendEscaped(b, body, i)
		if n == 0 {
			return "", false
		}
		b, i = out, i+n
	}
	return string(b), true
}

// validateJSON checks that s is one valid JSON value.
func validateJSON(s string) error {
	v := jsonValidator{s: s}
	i, err := v.value(skipWS(s, 0), 0)
	if err != nil {
		return err
	}
	if i = skipWS(s, i); i != len(s) {
		return fmt.Errorf("unexpected text after the value at offset %d", i)
	}
	return nil
}

type jsonValidator struct{ s string }

func (v jsonValidator) value(i, depth int) (int, error) {
	s := v.s
	if depth > maxJSONDepth {
		return 0, fmt.Errorf("nesting deeper than %d", maxJSONDepth)
	}
	if i >= len(s) {
		return 0, fmt.Errorf("unexpected end of input")
	}
	switch c := s[i]; {
	case c == '{':
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(s) || s[i] != '"' {
				return 0, fmt.Errorf("expected a member name at offset %d", i)
			}
			e, err := v.str(i)
			if err != nil {
				return 0, err
			}
			i = skipWS(s, e)
			if i >= len(s) || s[i] != ':' {
				return 0, fmt.Errorf("expected ':' at offset %d", i)
			}
			if i, err = v.value(skipWS(s, i+1), depth+1); err != nil {
				return 0, err
			}
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == '}' {
				return i + 1, nil
			}
			return 0, fmt.Errorf("expected ',' or '}' at offset %d", i)
		}
	case c == '[':
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = v.value(i, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == ']' {
				return i + 1, nil
			}
			return 0, fmt.Errorf("expected ',' or ']' at offset %d", i)
		}
	case c == '"':
		return v.str(i)
	case c == 't':
		return v.lit(i, "true")
	case c == 'f':
		return v.lit(i, "false")
	case c == 'n':
		return v.lit(i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return v.number(i)
	}
	return 0, fmt.Errorf("unexpected character %q at offset %d", s[i], i)
}

func (v jsonValidator) lit(i int, lit string) (int, error) {
	if e, ok := literalEnd(v.s, i, lit); ok {
		return e, nil
	}
	return 0, fmt.Errorf("invalid literal at offset %d", i)
}

func (v jsonValidator) str(i int) (int, error) {
	s := v.s
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			if j+1 >= len(s) {
				return 0, fmt.Errorf("unterminated string at offset %d", i)
			}
			var scratch [utf8.UTFMax]byte
			_, n, badHex := jsonstr.AppendEscaped(scratch[:0], s, j)
			switch {
			case badHex:
				return 0, fmt.Errorf("invalid \\u escape at offset %d", j)
			case n == 0:
				return 0, fmt.Errorf("invalid escape at offset %d", j)
			}
			j += n - 1
		case c < 0x20:
			return 0, fmt.Errorf("control character in string at offset %d", j)
		}
	}
	return 0, fmt.Errorf("unterminated string at offset %d", i)
}

func (v jsonValidator) number(i int) (int, error) {
	s, j := v.s, i
	digits := func() int {
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j - k
	}
	if s[j] == '-' {
		j++
	}
	if j < len(s) && s[j] == '0' {
		j++
	} else if digits() == 0 {
		return 0, fmt.Errorf("invalid number at offset %d", i)
	}
	if j < len(s) && s[j] == '.' {
		j++
		if digits() == 0 {
			return 0, fmt.Errorf("invalid number at offset %d", i)
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if digits() == 0 {
			return 0, fmt.Errorf("invalid number at offset %d", i)
		}
	}
	return j, nil
}

// compactJSON removes insignificant whitespace (s must be valid JSON, or at
// least have balanced strings).
func compactJSON(s string) string {
	needs := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			e, _, ok := scanString(s, i)
			if !ok {
				return s
			}
			i = e - 1
		case ' ', '\t', '\n', '\r':
			needs = true
		}
		if needs {
			break
		}
	}
	if !needs {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			e, _, ok := scanString(s, i)
			if !ok {
				return s
			}
			b = append(b, s[i:e]...)
			i = e - 1
		case ' ', '\t', '\n', '\r':
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// prettyJSON indents compact JSON text by two spaces per level.
func prettyJSON(s string) string {
	s = compactJSON(s)
	b := make([]byte, 0, len(s)*2)
	depth := 0
	newline := func() {
		b = append(b, '\n')
		// Indentation stops growing past maxPrettyIndent levels, which
		// bounds the output of deeply nested input.
		for k := 0; k < depth && k < maxPrettyIndent; k++ {
			b = append(b, ' ', ' ')
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			e, _, ok := scanString(s, i)
			if !ok {
				return s
			}
			b = append(b, s[i:e]...)
			i = e - 1
		case '{', '[':
			if i+1 < len(s) && (s[i+1] == '}' || s[i+1] == ']') {
				b = append(b, c, s[i+1])
				i++
				continue
			}
			b = append(b, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			b = append(b, c)
		case ',':
			b = append(b, c)
			newline()
		case ':':
			b = append(b, ':', ' ')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// ---- JSONPath ----

type jsonStep struct {
	key     string
	index   int
	isIndex bool
}

// maxJSONPath bounds a JSONPath's length.
const maxJSONPath = 4096

// parseJSONPath parses a JSONPath.
func parseJSONPath(name, p string) ([]jsonStep, error) {
	bad := func(why string) error { return fmt.Errorf("%s: invalid JSONPath %q: %s", name, clipValue(p), why) }
	if len(p) > maxJSONPath {
		return nil, bad("too long")
	}
	if p == "" || p[0] != '$' {
		return nil, bad("it must start with '$'")
	}
	var steps []jsonStep
	i := 1
	for i < len(p) {
		switch p[i] {
		case '.':
			i++
			if i < len(p) && (p[i] == '"' || p[i] == '\'') {
				key, e, ok := quotedPathKey(p, i)
				if !ok {
					return nil, bad("unterminated quoted name")
				}
				steps = append(steps, jsonStep{key: key})
				i = e
				continue
			}
			start := i
			for i < len(p) && p[i] != '.' && p[i] != '[' {
				i++
			}
			if i == start {
				return nil, bad("empty member name")
			}
			steps = append(steps, jsonStep{key: p[start:i]})
		case '[':
			i++
			for i < len(p) && p[i] == ' ' {
				i++
			}
			if i >= len(p) {
				return nil, bad("unterminated '['")
			}
			if p[i] == '"' || p[i] == '\'' {
				key, e, ok := quotedPathKey(p, i)
				if !ok {
					return nil, bad("unterminated quoted name")
				}
				steps = append(steps, jsonStep{key: key})
				i = e
			} else {
				start := i
				for i < len(p) && p[i] >= '0' && p[i] <= '9' {
					i++
				}
				if i == start || i-start > 9 {
					return nil, bad("expected an array index or a quoted name in []")
				}
				idx, _ := strconv.Atoi(p[start:i])
				steps = append(steps, jsonStep{index: idx, isIndex: true})
			}
			for i < len(p) && p[i] == ' ' {
				i++
			}
			if i >= len(p) || p[i] != ']' {
				return nil, bad("expected ']'")
			}
			i++
		default:
			return nil, bad(fmt.Sprintf("unexpected character %q", p[i]))
		}
	}
	return steps, nil
}

// quotedPathKey reads a quoted name starting at p[i] (' or "); a backslash
// escapes the next character.
func quotedPathKey(p string, i int) (string, int, bool) {
	q := p[i]
	var b strings.Builder
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			if j+1 < len(p) {
				j++
				b.WriteByte(p[j])
			}
		case q:
			return b.String(), j + 1, true
		default:
			b.WriteByte(p[j])
		}
	}
	return "", 0, false
}

// jsonFind returns the span of the value at path in s.
func jsonFind(s string, path []jsonStep) (start, end int, ok bool) {
	i := skipWS(s, 0)
	for _, st := range path {
		if i >= len(s) {
			return 0, 0, false
		}
		if st.isIndex {
			if s[i] != '[' {
				return 0, 0, false
			}
			i = skipWS(s, i+1)
			if i < len(s) && s[i] == ']' {
				return 0, 0, false
			}
			for k := 0; k < st.index; k++ {
				e, ok := skipValue(s, i)
				if !ok {
					return 0, 0, false
				}
				i = skipWS(s, e)
				if i >= len(s) || s[i] != ',' {
					return 0, 0, false
				}
				i = skipWS(s, i+1)
			}
			continue
		}
		if s[i] != '{' {
			return 0, 0, false
		}
		i = skipWS(s, i+1)
		for {
			if i >= len(s) || s[i] != '"' {
				return 0, 0, false
			}
			ke, esc, ok := scanString(s, i)
			if !ok {
				return 0, 0, false
			}
			var found bool
			if esc {
				k, _ := unquoteJSON(s[i:ke])
				found = k == st.key
			} else {
				found = s[i+1:ke-1] == st.key
			}
			i = skipWS(s, ke)
			if i >= len(s) || s[i] != ':' {
				return 0, 0, false
			}
			i = skipWS(s, i+1)
			if found {
				break
			}
			e, ok := skipValue(s, i)
			if !ok {
				return 0, 0, false
			}
			i = skipWS(s, e)
			if i >= len(s) || s[i] != ',' {
				return 0, 0, false
			}
			i = skipWS(s, i+1)
		}
	}
	e, ok := skipValue(s, i)
	return i, e, ok
}

// jsonScalar extracts a scalar as SQL STRING (JSON_VALUE): strings are
// unquoted; objects, arrays, null and missing values are NULL.
func jsonScalar(s string, path []jsonStep, _ bool) (string, bool) {
	start, end, ok := jsonFind(s, path)
	if !ok {
		return "", false
	}
	switch s[start] {
	case '{', '[', 'n':
		return "", false
	case '"':
		return unquoteJSON(s[start:end])
	}
	return s[start:end], true
}

// jsonQuery extracts a value as JSON text (JSON_QUERY). A JSON null is SQL
// NULL for STRING input and JSON 'null' for JSON input.
func jsonQuery(s string, path []jsonStep, jsonIn bool) (string, bool) {
	start, end, ok := jsonFind(s, path)
	if !ok {
		return "", false
	}
	if s[start] == 'n' && !jsonIn {
		return "", false
	}
	return compactJSON(s[start:end]), true
}

// jsonInputConv returns the coercion of a JSON function's first argument
// and whether it is JSON (rather than STRING) input.
func jsonInputConv(name string, args []Arg) (conv, bool, error) {
	switch args[0].Type {
	case vec.String, vec.Unknown:
		return nil, false, nil
	case vec.JSON:
		return nil, true, nil
	case vec.RowRef:
		return convMaterialize, true, nil
	case vec.List, vec.Struct:
		return convMaterialize, true, nil
	}
	return nil, false, sigError(name, args)
}

// jsonPathArg is a JSONPath argument compiled at bind time when constant.
type jsonPathArg struct {
	fixed   []jsonStep
	isFixed bool
}

func bindJSONPathArg(name string, args []Arg, i int) (jsonPathArg, error) {
	if i >= len(args) {
		return jsonPathArg{isFixed: true}, nil // default "$"
	}
	if args[i].Type != vec.String && args[i].Type != vec.Unknown {
		return jsonPathArg{}, sigError(name, args)
	}
	if p, isNull, ok := constString(args[i]); ok && !isNull {
		steps, err := parseJSONPath(name, p)
		if err != nil {
			return jsonPathArg{}, err
		}
		return jsonPathArg{fixed: steps, isFixed: true}, nil
	}
	return jsonPathArg{}, nil
}

func (pa jsonPathArg) cache(name string) func(vs []*vec.Vector, i int) ([]jsonStep, error) {
	if pa.isFixed {
		return func([]*vec.Vector, int) ([]jsonStep, error) { return pa.fixed, nil }
	}
	c := newPatternCache(func(p string) ([]jsonStep, error) { return parseJSONPath(name, p) })
	return func(vs []*vec.Vector, i int) ([]jsonStep, error) { return c.get(vs[1].StringAt(i)) }
}

// bindJSONExtract binds JSON_VALUE/JSON_EXTRACT_SCALAR (scalar: STRING
// result, path optional) and JSON_QUERY/JSON_EXTRACT.
func bindJSONExtract(extract func(s string, path []jsonStep, jsonIn bool) (string, bool), scalar bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		minArgs := 2
		if scalar {
			minArgs = 1
		}
		if err := checkArity(name, args, minArgs, 2); err != nil {
			return nil, err
		}
		c, jsonIn, err := jsonInputConv(name, args)
		if err != nil {
			return nil, err
		}
		pa, err := bindJSONPathArg(name, args, 1)
		if err != nil {
			return nil, err
		}
		typ := vec.String
		if !scalar && jsonIn {
			typ = vec.JSON
		}
		k := newKernel(typ, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			get := pa.cache(name)
			out := newVec(typ, n)
			err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
				path, err := get(vs, i)
				if err != nil {
					return err
				}
				r, ok := extract(vs[0].StringAt(i), path, jsonIn)
				if !ok {
					return errNull
				}
				out.Strs[i] = r
				return nil
			})
			return out, err
		})
		k.convs = []conv{c, nil}
		k.dictArg = dictArgOf(args)
		return k.bound(), nil
	}
}

// bindJSONArray binds JSON_VALUE_ARRAY (scalars: ARRAY<STRING>) and
// JSON_QUERY_ARRAY / JSON_EXTRACT_ARRAY (elements as JSON text). A value
// that is not an array (or, for scalars, holds objects or arrays) is NULL.
func bindJSONArray(scalars bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		if err := checkArity(name, args, 1, 2); err != nil {
			return nil, err
		}
		c, jsonIn, err := jsonInputConv(name, args)
		if err != nil {
			return nil, err
		}
		pa, err := bindJSONPathArg(name, args, 1)
		if err != nil {
			return nil, err
		}
		elem := vec.String
		if !scalars && jsonIn {
			elem = vec.JSON
		}
		k := newKernel(vec.List, func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			get := pa.cache(name)
			return listEval(elem, info.Safe, func(vs []*vec.Vector, i int, b *listBuilder) error {
				path, err := get(vs, i)
				if err != nil {
					return err
				}
				s := vs[0].StringAt(i)
				start, end, ok := jsonFind(s, path)
				if !ok || s[start] != '[' {
					return errNull
				}
				return jsonArrayElems(s[start:end], func(e string) error {
					switch {
					case !scalars:
						b.appendString(compactJSON(e))
					case e[0] == '{' || e[0] == '[':
						return errNull
					case e[0] == 'n':
						b.appendNull()
					case e[0] == '"':
						u, ok := unquoteJSON(e)
						if !ok {
							return errNull
						}
						b.appendString(u)
					default:
						b.appendString(e)
					}
					return nil
				})
			})(ec, vs, sel, n)
		})
		k.elem = elem
		k.convs = []conv{c, nil}
		k.dictArg = dictArgOf(args)
		return k.bound(), nil
	}
}

// jsonArrayElems calls f with the text of each element of the array a.
func jsonArrayElems(a string, f func(e string) error) error {
	i := skipWS(a, 1)
	if i < len(a) && a[i] == ']' {
		return nil
	}
	for i < len(a) {
		e, ok := skipValue(a, i)
		if !ok {
			return errNull
		}
		if err := f(a[i:e]); err != nil {
			return err
		}
		i = skipWS(a, e)
		if i >= len(a) {
			return errNull
		}
		if a[i] == ']' {
			return nil
		}
		if a[i] != ',' {
			return errNull
		}
		i = skipWS(a, i+1)
	}
	return errNull
}

func bindParseJSON(name string, args []Arg, info BindInfo) (*Bound, error) {
	// PARSE_JSON(s[, wide_number_mode=>...]): the mode is accepted and ignored
	// (numbers are kept as written).
	if err := checkArity(name, args, 1, 2); err != nil {
		return nil, err
	}
	if args[0].Type != vec.String && args[0].Type != vec.Unknown {
		return nil, sigError(name, args)
	}
	k := newKernel(vec.JSON, rowEval(vec.JSON, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		s := vs[0].StringAt(i)
		if err := validateJSON(s); err != nil {
			return fmt.Errorf("%s: invalid JSON input: %v", name, err)
		}
		out.Strs[i] = compactJSON(s)
		return nil
	}))
	if len(args) == 2 {
		k.dictArg = -1
	}
	return k.bound(), nil
}

func bindJSONType(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if _, err := match(name, args, 1, vec.JSON); err != nil {
		return nil, err
	}
	return newKernel(vec.String, rowEval(vec.String, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		s := vs[0].StringAt(i)
		j := skipWS(s, 0)
		if j >= len(s) {
			return errNull
		}
		switch s[j] {
		case '{':
			out.Strs[i] = "object"
		case '[':
			out.Strs[i] = "array"
		case '"':
			out.Strs[i] = "string"
		case 't', 'f':
			out.Strs[i] = "boolean"
		case 'n':
			out.Strs[i] = "null"
		default:
			out.Strs[i] = "number"
		}
		return nil
	})).bound(), nil
}

// bindJSONConvert binds STRING(json), INT64(json), FLOAT64(json) and
// BOOL(json): the JSON value must be of the matching JSON type (a JSON null
// is SQL NULL); INT64 also requires an integral number in range.
func bindJSONConvert(t vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		if _, err := match(name, args, 1, vec.JSON); err != nil {
			return nil, err
		}
		return newKernel(t, rowEval(t, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			s := strings.TrimSpace(vs[0].StringAt(i))
			if s == "null" {
				return errNull
			}
			bad := func() error {
				return fmt.Errorf("%s: the JSON value %s is not a %s", name, clipValue(s), jsonKindOf(t))
			}
			if s == "" {
				return bad()
			}
			switch t {
			case vec.String:
				u, ok := unquoteJSON(s)
				if !ok {
					return bad()
				}
				out.Strs[i] = u
			case vec.Bool:
				if s != "true" && s != "false" {
					return bad()
				}
				out.Bools[i] = s == "true"
			default:
				if _, err := (jsonValidator{s: s}).number(0); err != nil {
					return bad()
				}
				f, err := strconv.ParseFloat(s, 64)
				if err != nil && !math.IsInf(f, 0) {
					return bad()
				}
				if t == vec.Float64 {
					out.Floats[i] = f
					return nil
				}
				x, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					if f != math.Trunc(f) || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
						return fmt.Errorf("%s: the JSON number %s is not an INT64", name, clipValue(s))
					}
					x = int64(f)
				}
				out.Ints[i] = x
			}
			return nil
		})).bound(), nil
	}
}

func jsonKindOf(t vec.Type) string {
	switch t {
	case vec.String:
		return "string"
	case vec.Bool:
		return "boolean"
	}
	return "number"
}

// ---- CONTAINS_SUBSTR over JSON ----

// jsonContainsFold searches JSON text for needle (lower case) among values
// (JSON_VALUES), member names (JSON_KEYS) or both. Invalid text is searched
// as plain text.
func jsonContainsFold(s, needle, scope string) bool {
	keys := scope != "JSON_VALUES"
	values := scope != "JSON_KEYS"
	// stack of "inside an object" flags; expectKey tracks member names.
	var inObject []bool
	expectKey := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '{':
			inObject = append(inObject, true)
			expectKey = true
		case '[':
			inObject = append(inObject, false)
			expectKey = false
		case '}', ']':
			if len(inObject) > 0 {
				inObject = inObject[:len(inObject)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
		case ':':
			expectKey = false
		case '"':
			e, _, ok := scanString(s, i)
			if !ok {
				return predicate.ContainsFold(s, needle)
			}
			if (expectKey && keys) || (!expectKey && values) {
				if u, ok := unquoteJSON(s[i:e]); ok && predicate.ContainsFold(u, needle) {
					return true
				}
			}
			i = e - 1
		case ' ', '\t', '\n', '\r':
		default:
			e, ok := skipValue(s, i)
			if !ok || e <= i {
				continue
			}
			if values && predicate.ContainsFold(s[i:e], needle) {
				return true
			}
			i = e - 1
		}
	}
	return false
}

// ---- encoding values as JSON ----

func bindToJSON(typ vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		if err := checkArity(name, args, 1, 2); err != nil {
			return nil, err
		}
		if args[0].Part != "" || args[0].Type == vec.Interval {
			return nil, sigError(name, args)
		}
		pretty := false
		if len(args) == 2 {
			if args[1].Type != vec.Bool || args[1].Const == nil {
				return nil, fmt.Errorf("%s: pretty_print must be a constant BOOL", name)
			}
			pretty = !args[1].Const.Null && args[1].Const.Bool
		}
		k := &kernel{typ: typ, dictArg: -1, eval: func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			out, err := jsonTextVector(ec, vs[0], sel, n, true, pretty)
			if err != nil {
				return nil, err
			}
			out.Type = typ
			return out, nil
		}}
		return k.bound(), nil
	}
}

// convMaterialize turns a record (RowRef), array or struct vector into JSON
// text; other vectors pass unchanged.
func convMaterialize(ec *EvalCtx, v *vec.Vector, sel []int32, n int) (*vec.Vector, error) {
	switch v.Type {
	case vec.RowRef, vec.List, vec.Struct:
	default:
		return v, nil
	}
	out, err := jsonTextVector(ec, v, sel, n, false, false)
	if err != nil {
		return nil, err
	}
	out.Type = vec.JSON
	return out, nil
}

// jsonTextVector encodes each row of v as JSON text. NULL rows are the text
// "null" when nullText is set, else NULL.
func jsonTextVector(ec *EvalCtx, v *vec.Vector, sel []int32, n int, nullText, pretty bool) (*vec.Vector, error) {
	if v.Const && n > 1 {
		r, err := jsonTextVector(ec, v, nil, 1, nullText, pretty)
		if err != nil {
			return nil, err
		}
		return asConst(r, n), nil
	}
	refs, err := materializeRefs(ec, v, sel, n)
	if err != nil {
		return nil, err
	}
	out := newVec(vec.String, n)
	var buf []byte
	forRows(sel, n, func(i int) {
		if v.Type == vec.Unknown || v.IsNull(i) {
			if nullText {
				out.Strs[i] = "null"
			} else {
				setNull(out, i)
			}
			return
		}
		buf = appendJSONValue(buf[:0], v, i, refs)
		s := string(buf)
		if pretty {
			s = prettyJSON(s)
		}
		out.Strs[i] = s
	})
	return out, nil
}

// materializeRefs collects every record reference reachable from the rows
// to encode and materialises them with one call.
func materializeRefs(ec *EvalCtx, v *vec.Vector, sel []int32, n int) (map[int64]string, error) {
	var ids []int64
	var collect func(v *vec.Vector, i int)
	collect = func(v *vec.Vector, i int) {
		if v.IsNull(i) {
			return
		}
		switch v.Type {
		case vec.RowRef:
			ids = append(ids, v.IntAt(i))
		case vec.List:
			lo, hi := listRange(v, i)
			for j := lo; j < hi; j++ {
				collect(v.Elem, j)
			}
		case vec.Struct:
			for _, c := range v.Children {
				collect(c, structRow(v, i))
			}
		}
	}
	if v.Type != vec.RowRef && v.Type != vec.List && v.Type != vec.Struct {
		return nil, nil
	}
	forRows(sel, n, func(i int) { collect(v, i) })
	if len(ids) == 0 {
		return nil, nil
	}
	if ec == nil || ec.Materialize == nil {
		return nil, fmt.Errorf("records cannot be converted to JSON here")
	}
	texts := make([]string, len(ids))
	if err := ec.Materialize(ids, texts); err != nil {
		return nil, err
	}
	m := make(map[int64]string, len(ids))
	for k, id := range ids {
		m[id] = texts[k]
	}
	return m, nil
}

// structRow maps a row of a Struct vector to its children's row.
func structRow(v *vec.Vector, i int) int {
	if v.Const {
		return 0
	}
	return i
}

// appendJSONValue appends row i of v as JSON.
func appendJSONValue(b []byte, v *vec.Vector, i int, refs map[int64]string) []byte {
	if v.Type == vec.Unknown || v.IsNull(i) {
		return append(b, "null"...)
	}
	switch v.Type {
	case vec.Bool:
		if v.BoolAt(i) {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case vec.Int64:
		return strconv.AppendInt(b, v.IntAt(i), 10)
	case vec.Float64:
		// The digits are CAST's (15, else 17 significant), as BigQuery's
		// TO_JSON_STRING writes them; NaN and infinities as results do.
		f := v.FloatAt(i)
		if out, ok := jsonstr.AppendNonFinite(b, f); ok {
			return out
		}
		return append(b, formatFloat(f)...)
	case vec.String:
		return jsonstr.Append(b, v.StringAt(i))
	case vec.JSON:
		return append(b, compactJSON(v.StringAt(i))...)
	case vec.Timestamp:
		b = append(b, '"')
		b = appendDatetime(b, v.IntAt(i), 'T')
		return append(b, 'Z', '"')
	case vec.Datetime:
		b = append(b, '"')
		b = appendDatetime(b, v.IntAt(i), 'T')
		return append(b, '"')
	case vec.Date:
		b = append(b, '"')
		b = appendDate(b, v.IntAt(i))
		return append(b, '"')
	case vec.RowRef:
		if t, ok := refs[v.IntAt(i)]; ok {
			return append(b, t...)
		}
		return append(b, "null"...)
	case vec.List:
		lo, hi := listRange(v, i)
		b = append(b, '[')
		for j := lo; j < hi; j++ {
			if j > lo {
				b = append(b, ',')
			}
			b = appendJSONValue(b, v.Elem, j, refs)
		}
		return append(b, ']')
	case vec.Struct:
		b = append(b, '{')
		for c, child := range v.Children {
			if c > 0 {
				b = append(b, ',')
			}
			name := ""
			if c < len(v.Names) {
				name = v.Names[c]
			}
			b = jsonstr.Append(b, name)
			b = append(b, ':')
			b = appendJSONValue(b, child, structRow(v, i), refs)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}
