package predicate

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Regex answers "does s contain a match" for an RE2 pattern (Go's regexp,
// BigQuery's syntax). Go's engine costs tens of nanoseconds a byte on
// alternations and case-insensitive patterns, and most patterns users
// write are, or contain, plain literals that a substring search finds far
// faster. So each pattern is analysed once:
//
//   - a literal, ^literal, literal$, ^literal$ or the empty pattern runs
//     as a string operation and never reaches the regex engine;
//   - else the literals every match contains (one of a set: an
//     alternation's branches, a small character class) reject text that
//     has none of them, and decide alone when the pattern is exactly that
//     set (auth/v1/(token|user));
//   - else a pattern anchored at the start that is a fixed sequence of
//     literals, characters and alternations of them
//     (^https://[a-z]{20}[.]supabase[.]co/(rest|auth)/) is walked over
//     the text's first bytes (anchored.go);
//   - else a top-level alternation runs branch by branch, each with its
//     own fast path.
//
// A Regex is immutable and safe for concurrent use.
type Regex struct {
	re    *regexp.Regexp
	shape regexShape
	lit   string   // the literal of the plain shapes
	subs  []*Regex // a top-level alternation's branches, or nil
	// prefix is the literal an anchored pattern (^literal…) starts with:
	// text without it is rejected at once, where a search for need would
	// read all of it.
	prefix string
	// anchored, when not nil, decides a pattern anchored at the start
	// without the regex engine (anchored.go).
	anchored *anchoredProgram
	need     litSet // one of these is in every match (none: nothing known, or prefix says it)
	exact    bool   // containing one of need decides a match
	req      []Lit  // what Required reports: need's literals, even where prefix stands in
	// search finds the values that may match among many (search.go);
	// searchExact: those it finds all match.
	search      *Searcher
	searchExact bool
}

type regexShape uint8

const (
	regexGeneral  regexShape = iota
	regexContains            // literal
	regexPrefix              // ^literal
	regexSuffix              // literal$
	regexEqual               // ^literal$
	regexAlways              // the empty pattern
)

// Lit is a literal a match contains. Fold: compared ignoring ASCII case
// (S is then lower case).
type Lit struct {
	S    string
	Fold bool
}

// maxRegexLits bounds the literals one pattern is turned into.
const maxRegexLits = 32

// maxBranches bounds the alternation run branch by branch.
const maxBranches = 16

// CompileRegex compiles an RE2 pattern.
func CompileRegex(pattern string) (*Regex, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return NewRegex(re), nil
}

// NewRegex analyses a compiled pattern.
func NewRegex(re *regexp.Regexp) *Regex {
	r := &Regex{re: re}
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return r // cannot happen for a compiled pattern; the regex decides
	}
	parsed = parsed.Simplify()
	if shape, lit, ok := literalShape(parsed); ok {
		r.shape, r.lit = shape, lit
		r.search, r.searchExact = r.newRegexSearcher()
		return r
	}
	if lits, exact, ok := required(parsed); ok && len(lits) > 0 && len(lits) <= maxRegexLits {
		r.need, r.exact, r.req = newLitSet(lits), exact, lits
	}
	if parsed.Op == syntax.OpConcat && len(parsed.Sub) > 1 && parsed.Sub[0].Op == syntax.OpBeginText {
		if lit := parsed.Sub[1]; lit.Op == syntax.OpLiteral && lit.Flags&syntax.FoldCase == 0 && !hasRuneError(lit.Rune) {
			r.prefix = string(lit.Rune)
			if len(r.need.lits) == 1 && r.need.lits[0] == (Lit{S: r.prefix}) {
				r.need = litSet{} // the prefix test says all the search would
			}
		}
	}
	r.anchored = compileAnchored(parsed)
	if !r.exact && parsed.Op == syntax.OpAlternate && len(parsed.Sub) <= maxBranches {
		subs := make([]*Regex, 0, len(parsed.Sub))
		for _, sub := range parsed.Sub {
			sre, err := regexp.Compile(sub.String())
			if err != nil {
				subs = nil
				break
			}
			subs = append(subs, NewRegex(sre))
		}
		r.subs = subs
	}
	r.search, r.searchExact = r.newRegexSearcher()
	return r
}

// Regexp returns the compiled pattern.
func (r *Regex) Regexp() *regexp.Regexp { return r.re }

// Required returns literals one of which every match contains (nil: none
// known), and whether containing one decides the match. A token index
// looks them up. A plain literal pattern is its own literal.
func (r *Regex) Required() (lits []Lit, exact bool) {
	switch r.shape {
	case regexContains:
		if r.lit != "" {
			return []Lit{{S: r.lit}}, true
		}
	case regexPrefix, regexSuffix, regexEqual:
		if r.lit != "" {
			return []Lit{{S: r.lit}}, false
		}
	case regexGeneral:
		return r.req, r.exact
	}
	return nil, false
}

// Match reports whether s contains a match.
func (r *Regex) Match(s string) bool {
	switch r.shape {
	case regexContains:
		return strings.Contains(s, r.lit)
	case regexPrefix:
		return strings.HasPrefix(s, r.lit)
	case regexSuffix:
		return strings.HasSuffix(s, r.lit)
	case regexEqual:
		return s == r.lit
	case regexAlways:
		return true
	}
	if r.prefix != "" && !strings.HasPrefix(s, r.prefix) {
		return false
	}
	if r.anchored != nil {
		return r.anchored.match(s)
	}
	if len(r.need.lits) > 0 {
		switch r.need.find(s) {
		case litFound:
			if r.exact {
				return true
			}
		case litAbsent:
			return false
		}
	}
	if r.subs != nil {
		for _, sub := range r.subs {
			if sub.Match(s) {
				return true
			}
		}
		return false
	}
	return r.re.MatchString(s)
}

// literalShape recognises patterns that need no regex engine.
func literalShape(re *syntax.Regexp) (regexShape, string, bool) {
	literal := func(r *syntax.Regexp) (string, bool) {
		if r.Op == syntax.OpLiteral && r.Flags&syntax.FoldCase == 0 && !hasRuneError(r.Rune) {
			return string(r.Rune), true
		}
		return "", false
	}
	switch re.Op {
	case syntax.OpEmptyMatch:
		return regexAlways, "", true
	case syntax.OpLiteral:
		if s, ok := literal(re); ok {
			return regexContains, s, true
		}
	case syntax.OpConcat:
		subs := re.Sub
		begin := len(subs) > 0 && subs[0].Op == syntax.OpBeginText
		if begin {
			subs = subs[1:]
		}
		end := len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText
		if end {
			subs = subs[:len(subs)-1]
		}
		if len(subs) != 1 || (!begin && !end) {
			return 0, "", false
		}
		s, ok := literal(subs[0])
		if !ok {
			return 0, "", false
		}
		switch {
		case begin && end:
			return regexEqual, s, true
		case begin:
			return regexPrefix, s, true
		default:
			return regexSuffix, s, true
		}
	}
	return 0, "", false
}

// required returns literals one of which every match of re contains, and
// whether containing one of them means re matches.
func required(re *syntax.Regexp) (lits []Lit, exact, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		if hasRuneError(re.Rune) {
			return nil, false, false
		}
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
		return []Lit{{S: s, Fold: fold}}, true, true
	case syntax.OpCharClass:
		// A small class is an alternation of one-character literals (a|b
		// simplifies to [a-b]).
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if len(lits) == maxRegexLits || c == utf8.RuneError {
					return nil, false, false
				}
				lits = append(lits, Lit{S: string(c)})
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
			if lits = append(lits, l...); len(lits) > maxRegexLits {
				return nil, false, false
			}
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
		// Else the most selective factor; a concatenation is not exact
		// (its other factors, anchors included, must match too).
		var best []Lit
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
func concatLiterals(subs []*syntax.Regexp) ([]Lit, bool) {
	out := []Lit{{}}
	for i, sub := range subs {
		lits, exact, ok := required(sub)
		if !ok || !exact {
			return nil, false
		}
		if len(out)*len(lits) > maxRegexLits {
			return nil, false
		}
		next := make([]Lit, 0, len(out)*len(lits))
		for _, a := range out {
			for _, b := range lits {
				if i > 0 && b.Fold != a.Fold {
					return nil, false
				}
				next = append(next, Lit{S: a.S + b.S, Fold: b.Fold})
			}
		}
		out = next
	}
	return out, true
}

// better prefers fewer alternatives, then a longer shortest literal.
func better(a, b []Lit) bool {
	if b == nil {
		return true
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return shortest(a) > shortest(b)
}

func shortest(ls []Lit) int {
	n := -1
	for _, l := range ls {
		if n < 0 || len(l.S) < n {
			n = len(l.S)
		}
	}
	return n
}

// hasRuneError reports whether a literal holds U+FFFD, which Go's regexp
// also matches on each invalid UTF-8 byte (it reads one as U+FFFD): a byte
// search for the literal would miss those.
func hasRuneError(runes []rune) bool {
	for _, r := range runes {
		if r == utf8.RuneError {
			return true
		}
	}
	return false
}
