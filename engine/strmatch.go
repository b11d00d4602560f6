package engine

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// String matching for pushed-down REGEXP_CONTAINS and LIKE. Go's regexp
// engine costs tens of nanoseconds per byte on alternations and
// case-insensitive patterns; most patterns users write are, or contain,
// plain literals that a substring search finds far faster. So each
// pattern is analysed once for literals every match must contain: when
// they decide the match alone the regex never runs, otherwise they filter
// the rows it runs on.

// regexLit is a literal a regex match contains, compared ASCII
// case-insensitively when fold is set.
type regexLit struct {
	s    string
	fold bool
}

// regexPlan is what a regex requires of a matching string: at least one of
// anyOf (nil: nothing known); exact when containing one is also enough.
type regexPlan struct {
	anyOf []regexLit
	exact bool
}

// maxRegexLits bounds an alternation turned into literals.
const maxRegexLits = 32

// planRegex analyses a regex (RE2 syntax, as BigQuery's).
func planRegex(expr string) regexPlan {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return regexPlan{}
	}
	lits, exact, ok := required(re.Simplify())
	if !ok || len(lits) == 0 || len(lits) > maxRegexLits {
		return regexPlan{}
	}
	return regexPlan{anyOf: lits, exact: exact}
}

// required returns literals one of which every match of re contains, and
// whether containing one of them means re matches.
func required(re *syntax.Regexp) (lits []regexLit, exact, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold && !isASCII(s) {
			return nil, false, false // Unicode case folding: leave it to the regex
		}
		if len(s) == 0 {
			return nil, false, false
		}
		if fold {
			s = strings.ToLower(s)
		}
		return []regexLit{{s: s, fold: fold}}, true, true
	case syntax.OpCharClass:
		// A small class is an alternation of one-character literals (a|b
		// simplifies to [a-b]).
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(lits) == maxRegexLits {
					return nil, false, false
				}
				lits = append(lits, regexLit{s: string(r)})
			}
		}
		return lits, len(lits) > 0, len(lits) > 0
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpAlternate:
		exact = true
		for _, sub := range re.Sub {
			l, e, ok := required(sub)
			if !ok {
				return nil, false, false // a branch with no literal can match anything
			}
			lits = append(lits, l...)
			exact = exact && e
		}
		return lits, exact, true
	case syntax.OpConcat:
		// A concatenation of exact factors (literals, small classes and
		// alternations of them) is exactly the set of their combinations,
		// while it stays small: auth/v1/(token|user) is auth/v1/token or
		// auth/v1/user.
		if lits, ok := concatLiterals(re.Sub); ok {
			return lits, true, true
		}
		// Else the most selective factor; only a concatenation reduced to
		// one factor (around zero-width anchors it is not) stays exact.
		var best []regexLit
		for _, sub := range re.Sub {
			if l, _, ok := required(sub); ok && better(l, best) {
				best = l
			}
		}
		return best, false, best != nil
	case syntax.OpPlus:
		l, _, ok := required(re.Sub[0]) // x+ contains x
		return l, false, ok
	case syntax.OpRepeat:
		if re.Min >= 1 {
			l, _, ok := required(re.Sub[0])
			return l, false, ok
		}
	}
	return nil, false, false
}

// concatLiterals returns every combination of one literal of each factor,
// when each factor is exact, all are compared with the same case rule, and
// there are at most maxRegexLits combinations.
func concatLiterals(subs []*syntax.Regexp) ([]regexLit, bool) {
	out := []regexLit{{}}
	for i, sub := range subs {
		lits, exact, ok := required(sub)
		if !ok || !exact {
			return nil, false
		}
		if len(out)*len(lits) > maxRegexLits {
			return nil, false
		}
		next := make([]regexLit, 0, len(out)*len(lits))
		for _, a := range out {
			for _, b := range lits {
				if i > 0 && b.fold != a.fold {
					return nil, false
				}
				next = append(next, regexLit{s: a.s + b.s, fold: b.fold})
			}
		}
		out = next
	}
	return out, true
}

// better prefers fewer alternatives, then longer shortest literal.
func better(a, b []regexLit) bool {
	if b == nil {
		return true
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return shortest(a) > shortest(b)
}

func shortest(ls []regexLit) int {
	n := -1
	for _, l := range ls {
		if n < 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// litSet finds whether a string contains one of a set of literals. When
// the literals share a prefix (auth/v1/token, auth/v1/user) it searches
// for the prefix once and tries each literal where it occurs, instead of
// searching the string once per literal.
type litSet struct {
	lits   []regexLit
	prefix string // common prefix of case-sensitive literals (≥ 3 bytes), or ""
}

func newLitSet(lits []regexLit) litSet {
	ls := litSet{lits: lits}
	if len(lits) < 2 {
		return ls
	}
	p := lits[0].s
	for _, l := range lits {
		if l.fold {
			return ls
		}
		n := 0
		for n < len(p) && n < len(l.s) && p[n] == l.s[n] {
			n++
		}
		p = p[:n]
	}
	if len(p) >= 3 {
		ls.prefix = p
	}
	return ls
}

// contains reports whether s contains one of the literals.
func (ls *litSet) contains(s string) bool {
	if ls.prefix == "" {
		return containsAnyLit(s, ls.lits)
	}
	for pos := 0; ; {
		i := strings.Index(s[pos:], ls.prefix)
		if i < 0 {
			return false
		}
		pos += i
		for _, l := range ls.lits {
			if strings.HasPrefix(s[pos:], l.s) {
				return true
			}
		}
		pos++
	}
}

// containsAnyLit reports whether s contains one of the literals.
func containsAnyLit(s string, lits []regexLit) bool {
	for _, l := range lits {
		if l.fold {
			if containsFoldASCII(s, l.s) {
				return true
			}
		} else if strings.Contains(s, l.s) {
			return true
		}
	}
	return false
}

// containsFoldASCII reports whether s contains sub (ASCII) ignoring ASCII
// case. It jumps between occurrences of sub's first byte in either case.
func containsFoldASCII(s, sub string) bool {
	if len(sub) == 0 {
		return true
	}
	lo, up := lowerASCII(sub[0]), upperASCII(sub[0])
	for i := 0; i+len(sub) <= len(s); {
		j := indexEitherByte(s[i:len(s)-len(sub)+1], lo, up)
		if j < 0 {
			return false
		}
		i += j
		if equalFoldASCII(s[i:i+len(sub)], sub) {
			return true
		}
		i++
	}
	return false
}

func indexEitherByte(s string, a, b byte) int {
	if a == b {
		return strings.IndexByte(s, a)
	}
	i, j := strings.IndexByte(s, a), strings.IndexByte(s, b)
	switch {
	case i < 0:
		return j
	case j < 0 || i < j:
		return i
	}
	return j
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// likeMatcher implements SQL LIKE: % any run of characters, _ exactly one
// character, a backslash escaping the next character. Matching walks the
// pattern with one backtracking point (the last %), so it is O(len(s) ×
// len(pattern)) at worst, never exponential.
type likeMatcher struct {
	toks []likeTok
}

type likeTok struct {
	kind byte // 'l' literal run, '_' one character, '%' any run
	lit  string
}

func compileLike(pattern string) *likeMatcher {
	m := &likeMatcher{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			m.toks = append(m.toks, likeTok{kind: 'l', lit: lit.String()})
			lit.Reset()
		}
	}
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '%':
			flush()
			if n := len(m.toks); n == 0 || m.toks[n-1].kind != '%' {
				m.toks = append(m.toks, likeTok{kind: '%'})
			}
		case '_':
			flush()
			m.toks = append(m.toks, likeTok{kind: '_'})
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			lit.WriteRune(rs[i])
		default:
			lit.WriteRune(c)
		}
	}
	flush()
	return m
}

// required returns the pattern's longest literal run, which every match
// contains, and whether the pattern is exactly %literal% (so containing it
// decides).
func (m *likeMatcher) required() (lit string, exact bool) {
	for _, t := range m.toks {
		if t.kind == 'l' && len(t.lit) > len(lit) {
			lit = t.lit
		}
	}
	exact = len(m.toks) == 3 && m.toks[0].kind == '%' && m.toks[1].kind == 'l' && m.toks[2].kind == '%'
	return lit, exact
}

func (m *likeMatcher) match(s string) bool {
	toks := m.toks
	ti, si := 0, 0
	starT, starS := -1, 0
	for {
		if ti < len(toks) {
			switch t := toks[ti]; t.kind {
			case '%':
				starT, starS = ti, si
				ti++
				continue
			case '_':
				if si < len(s) {
					_, size := utf8.DecodeRuneInString(s[si:])
					ti, si = ti+1, si+size
					continue
				}
			case 'l':
				if strings.HasPrefix(s[si:], t.lit) {
					ti, si = ti+1, si+len(t.lit)
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		// Mismatch: let the last % take one more character.
		if starT < 0 || starS >= len(s) {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[starS:])
		starS += size
		ti, si = starT+1, starS
	}
}
