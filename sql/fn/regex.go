package fn

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
)

// Regular expressions use RE2 syntax (Go's regexp), as BigQuery does. A
// constant pattern is compiled once at bind time; a pattern from a column
// is compiled once per distinct value within an Eval. REGEXP_CONTAINS
// matches with internal/predicate's Regex (literal shapes and prefilters
// shared with pushed-down filters and LQL), and a dictionary-encoded input
// is matched once per dictionary entry (the kernel wrapper does that).

func init() {
	register("regexp_contains", bindRegexpContains)
	register("regexp_extract", bindRegexpExtract, "regexp_substr")
	register("regexp_extract_all", bindRegexpExtractAll)
	register("regexp_replace", bindRegexpReplace)
	register("regexp_instr", bindRegexpInstr)
}

// compileRegexp compiles an RE2 pattern with a clear error.
func compileRegexp(name, pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid regular expression %q: %v", name, pattern, err)
	}
	return re, nil
}

// compileMatcher compiles a pattern for REGEXP_CONTAINS: the shared
// matcher (internal/predicate) that pushed-down filters and LQL use too.
func compileMatcher(name, pattern string) (*predicate.Regex, error) {
	re, err := compileRegexp(name, pattern)
	if err != nil {
		return nil, err
	}
	return predicate.NewRegex(re), nil
}

// patternCache compiles per-row patterns once per distinct value.
type patternCache[T any] struct {
	compile func(string) (T, error)
	m       map[string]T
	errs    map[string]error
}

func newPatternCache[T any](compile func(string) (T, error)) *patternCache[T] {
	return &patternCache[T]{compile: compile, m: map[string]T{}, errs: map[string]error{}}
}

func (c *patternCache[T]) get(p string) (T, error) {
	if v, ok := c.m[p]; ok {
		return v, nil
	}
	if err, ok := c.errs[p]; ok {
		var zero T
		return zero, err
	}
	v, err := c.compile(p)
	if err != nil {
		c.errs[p] = err
		return v, err
	}
	c.m[p] = v
	return v, nil
}

func bindRegexpContains(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	var fixed *predicate.Regex
	if p, isNull, ok := constString(args[1]); ok && !isNull {
		if fixed, err = compileMatcher(name, p); err != nil {
			return nil, err
		}
	}
	k := newKernel(vec.Bool, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		s := vs[0]
		if fixed != nil {
			out := &vec.Vector{Type: vec.Bool, Len: n, Bools: make([]bool, n), Nulls: s.Nulls}
			if s.Dict == nil && !s.Const && !s.IsBytes() {
				strs := s.Strs
				forRows(sel, n, func(i int) { out.Bools[i] = fixed.Match(strs[i]) })
			} else {
				forRows(sel, n, func(i int) { out.Bools[i] = fixed.Match(s.StringAt(i)) })
			}
			return out, nil
		}
		cache := newPatternCache(func(p string) (*predicate.Regex, error) { return compileMatcher(name, p) })
		out := newVec(vec.Bool, n)
		err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
			m, err := cache.get(vs[1].StringAt(i))
			if err != nil {
				return err
			}
			out.Bools[i] = m.Match(s.StringAt(i))
			return nil
		})
		return out, err
	})
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

// extractRegexp compiles a pattern for the extraction functions, which
// allow at most one capturing group.
func extractRegexp(name, p string) (*regexp.Regexp, error) {
	re, err := compileRegexp(name, p)
	if err != nil {
		return nil, err
	}
	if re.NumSubexp() > 1 {
		return nil, fmt.Errorf("%s: regular expressions passed into extraction functions must not have more than 1 capturing group", name)
	}
	return re, nil
}

// regexpArg is a pattern argument: compiled at bind time when constant,
// else compiled per distinct value during an Eval.
type regexpArg struct {
	name    string
	fixed   *regexp.Regexp
	compile func(name, p string) (*regexp.Regexp, error)
}

func bindRegexpArg(name string, a Arg, compile func(name, p string) (*regexp.Regexp, error)) (regexpArg, error) {
	ra := regexpArg{name: name, compile: compile}
	if p, isNull, ok := constString(a); ok && !isNull {
		re, err := compile(name, p)
		if err != nil {
			return ra, err
		}
		ra.fixed = re
	}
	return ra, nil
}

// cache returns the per-Eval lookup of row i's pattern.
func (ra regexpArg) cache() func(v *vec.Vector, i int) (*regexp.Regexp, error) {
	if ra.fixed != nil {
		return func(*vec.Vector, int) (*regexp.Regexp, error) { return ra.fixed, nil }
	}
	c := newPatternCache(func(p string) (*regexp.Regexp, error) { return ra.compile(ra.name, p) })
	return func(v *vec.Vector, i int) (*regexp.Regexp, error) { return c.get(v.StringAt(i)) }
}

func bindRegexpExtract(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.String, vec.Int64, vec.Int64)
	if err != nil {
		return nil, err
	}
	ra, err := bindRegexpArg(name, args[1], extractRegexp)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.String, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		get := ra.cache()
		out := newVec(vec.String, n)
		err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
			re, err := get(vs[1], i)
			if err != nil {
				return err
			}
			pos, occ := int64(1), int64(1)
			if len(vs) > 2 {
				pos = vs[2].IntAt(i)
			}
			if len(vs) > 3 {
				occ = vs[3].IntAt(i)
			}
			if pos <= 0 {
				return fmt.Errorf("%s: the position must be positive, got %d", name, pos)
			}
			if occ <= 0 {
				return fmt.Errorf("%s: the occurrence must be positive, got %d", name, occ)
			}
			s := vs[0].StringAt(i)
			if pos > int64(charLen(s)) && !(pos == 1 && s == "") {
				return errNull
			}
			s = s[runeOffset(s, int(pos-1)):]
			ms := re.FindAllStringSubmatchIndex(s, int(min(occ, int64(len(s)+1))))
			if int64(len(ms)) < occ {
				return errNull
			}
			m := ms[occ-1]
			if len(m) > 2 {
				m = m[2:]
			}
			if m[0] < 0 {
				return errNull
			}
			out.Strs[i] = s[m[0]:m[1]]
			return nil
		})
		return out, err
	})
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

func bindRegexpExtractAll(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	ra, err := bindRegexpArg(name, args[1], extractRegexp)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.List, func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		get := ra.cache()
		return listEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, b *listBuilder) error {
			re, err := get(vs[1], i)
			if err != nil {
				return err
			}
			s := vs[0].StringAt(i)
			for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
				if len(m) > 2 {
					m = m[2:]
				}
				if m[0] < 0 {
					b.appendString("")
				} else {
					b.appendString(s[m[0]:m[1]])
				}
			}
			return nil
		})(ec, vs, sel, n)
	})
	k.elem = vec.String
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

// replacement is a parsed REGEXP_REPLACE replacement: literal text and
// group references (\0 .. \9).
type replacement struct {
	parts []replPart
}

type replPart struct {
	lit   string
	group int // -1 for literal text
}

func parseReplacement(name, r string, groups int) (*replacement, error) {
	var out replacement
	var lit strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c != '\\' {
			lit.WriteByte(c)
			continue
		}
		if i+1 >= len(r) {
			return nil, fmt.Errorf("%s: the replacement ends with a backslash", name)
		}
		i++
		switch d := r[i]; {
		case d == '\\':
			lit.WriteByte('\\')
		case d >= '0' && d <= '9':
			g := int(d - '0')
			if g > groups {
				return nil, fmt.Errorf("%s: the replacement refers to capturing group \\%d but the pattern has %d", name, g, groups)
			}
			if lit.Len() > 0 {
				out.parts = append(out.parts, replPart{lit: lit.String(), group: -1})
				lit.Reset()
			}
			out.parts = append(out.parts, replPart{group: g})
		default:
			return nil, fmt.Errorf("%s: invalid escape \\%c in the replacement; use \\\\ for a backslash", name, d)
		}
	}
	if lit.Len() > 0 {
		out.parts = append(out.parts, replPart{lit: lit.String(), group: -1})
	}
	return &out, nil
}

func bindRegexpReplace(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 3, vec.String, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	ra, err := bindRegexpArg(name, args[1], compileRegexp)
	if err != nil {
		return nil, err
	}
	var fixedRepl *replacement
	if r, isNull, ok := constString(args[2]); ok && !isNull && ra.fixed != nil {
		if fixedRepl, err = parseReplacement(name, r, ra.fixed.NumSubexp()); err != nil {
			return nil, err
		}
	}
	k := newKernel(vec.String, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		get := ra.cache()
		out := newVec(vec.String, n)
		err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
			re, err := get(vs[1], i)
			if err != nil {
				return err
			}
			repl := fixedRepl
			if repl == nil {
				if repl, err = parseReplacement(name, vs[2].StringAt(i), re.NumSubexp()); err != nil {
					return err
				}
			}
			r, err := regexpReplace(name, re, vs[0].StringAt(i), repl)
			out.Strs[i] = r
			return err
		})
		return out, err
	})
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

// regexpReplace replaces every match of re in s.
func regexpReplace(name string, re *regexp.Regexp, s string, repl *replacement) (string, error) {
	ms := re.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		for _, p := range repl.parts {
			if p.group < 0 {
				b.WriteString(p.lit)
			} else if lo, hi := m[2*p.group], m[2*p.group+1]; lo >= 0 {
				b.WriteString(s[lo:hi])
			}
		}
		last = m[1]
		if b.Len() > maxResultBytes {
			return "", tooLarge(name)
		}
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

func bindRegexpInstr(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.String, vec.Int64, vec.Int64, vec.Int64)
	if err != nil {
		return nil, err
	}
	ra, err := bindRegexpArg(name, args[1], extractRegexp)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.Int64, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		get := ra.cache()
		out := newVec(vec.Int64, n)
		err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
			re, err := get(vs[1], i)
			if err != nil {
				return err
			}
			pos, occ, after := int64(1), int64(1), int64(0)
			if len(vs) > 2 {
				pos = vs[2].IntAt(i)
			}
			if len(vs) > 3 {
				occ = vs[3].IntAt(i)
			}
			if len(vs) > 4 {
				after = vs[4].IntAt(i)
			}
			if pos <= 0 || occ <= 0 || (after != 0 && after != 1) {
				return fmt.Errorf("%s: position and occurrence must be positive and occurrence_position 0 or 1", name)
			}
			s := vs[0].StringAt(i)
			if pos > int64(charLen(s)) {
				return nil
			}
			off := runeOffset(s, int(pos-1))
			ms := re.FindAllStringSubmatchIndex(s[off:], int(min(occ, int64(len(s)+1))))
			if int64(len(ms)) < occ {
				return nil
			}
			m := ms[occ-1]
			if len(m) > 2 {
				m = m[2:]
			}
			if m[0] < 0 {
				return nil
			}
			at := m[0]
			if after == 1 {
				at = m[1]
			}
			out.Ints[i] = int64(charLen(s[:off+at])) + 1
			return nil
		})
		return out, err
	})
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}
