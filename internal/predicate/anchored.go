package predicate

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// anchoredProgram matches a pattern anchored at the start of the text
// (^…) that is a fixed sequence of literals, single characters (classes,
// `.`) and alternations of such sequences, with an optional $ — the shape
// of URL and path filters such as
// ^https://[a-z]{20}[.]supabase[.]co/(rest|storage|auth|realtime)/.
// Go's regexp runs such a pattern through its backtracker at about a
// microsecond a row; this walks the text once per alternative, comparing
// bytes, and answers the same (does the text contain a match, which for a
// pattern anchored at the start is "does a match start at 0").
//
// Alternations are tried branch by branch (anchoredNode); the number of
// paths through the pattern is bounded at compile time (maxAnchoredPaths),
// so a failing text costs at most that many short walks.
type anchoredProgram struct {
	root *anchoredNode
}

type anchoredKind uint8

const (
	stepLiteral anchoredKind = iota // lit, compared byte for byte
	stepClass                       // n characters each in class
	stepEnd                         // the end of the text ($)
	stepAlt                         // one of branches
)

type anchoredStep struct {
	kind     anchoredKind
	lit      string
	class    *runeClass
	n        int // stepClass: how many characters in a row
	branches [][]anchoredStep
}

// runeClass is a set of runes: sorted inclusive ranges, and for ASCII a
// bitmap.
type runeClass struct {
	ranges    []rune // lo, hi pairs, as syntax.Regexp.Rune
	ascii     [2]uint64
	asciiOnly bool // no rune of the class is beyond ASCII
}

func newRuneClass(ranges []rune) *runeClass {
	c := &runeClass{ranges: ranges, asciiOnly: len(ranges) == 0 || ranges[len(ranges)-1] < utf8.RuneSelf}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r < utf8.RuneSelf; r++ {
			c.ascii[r>>6] |= 1 << (r & 63)
		}
	}
	return c
}

func (c *runeClass) has(r rune) bool {
	if r < utf8.RuneSelf {
		return c.ascii[r>>6]&(1<<(r&63)) != 0
	}
	for i := 0; i+1 < len(c.ranges); i += 2 {
		if r < c.ranges[i] {
			return false
		}
		if r <= c.ranges[i+1] {
			return true
		}
	}
	return false
}

// maxAnchoredPaths bounds the paths through an anchored program (the
// product of its alternations' branch counts, summed over nesting).
const maxAnchoredPaths = 64

// anyRune and anyRuneNotNL are the classes of (?s:.) and `.`.
var (
	anyRune      = newRuneClass([]rune{0, utf8.MaxRune})
	anyRuneNotNL = newRuneClass([]rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune})
)

// compileAnchored returns the program of a simplified pattern, or nil when
// the pattern is not of the shape it handles.
func compileAnchored(re *syntax.Regexp) *anchoredProgram {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText {
		return nil
	}
	steps, ok := appendAnchored(nil, re.Sub[1:])
	if !ok || anchoredPaths(steps) > maxAnchoredPaths {
		return nil
	}
	return &anchoredProgram{root: unfoldAnchored(steps)}
}

// appendAnchored appends the steps of a sequence of subexpressions.
func appendAnchored(steps []anchoredStep, subs []*syntax.Regexp) ([]anchoredStep, bool) {
	for _, sub := range subs {
		var ok bool
		if steps, ok = appendAnchoredOne(steps, sub); !ok {
			return nil, false
		}
		if len(steps) > 1024 {
			return nil, false
		}
	}
	return steps, true
}

func appendAnchoredOne(steps []anchoredStep, re *syntax.Regexp) ([]anchoredStep, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return steps, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		s := string(re.Rune)
		// Go's regexp reads an invalid byte as U+FFFD, which a literal
		// U+FFFD then matches: bytes cannot say that.
		if strings.ContainsRune(s, utf8.RuneError) {
			return nil, false
		}
		if n := len(steps); n > 0 && steps[n-1].kind == stepLiteral {
			steps[n-1].lit += s
			return steps, true
		}
		return append(steps, anchoredStep{kind: stepLiteral, lit: s}), true
	case syntax.OpCharClass:
		return appendClass(steps, newRuneClass(re.Rune), re.Rune), true
	case syntax.OpAnyCharNotNL:
		return appendClass(steps, anyRuneNotNL, nil), true
	case syntax.OpAnyChar:
		return appendClass(steps, anyRune, nil), true
	case syntax.OpEndText:
		return append(steps, anchoredStep{kind: stepEnd}), true
	case syntax.OpCapture:
		return appendAnchoredOne(steps, re.Sub[0])
	case syntax.OpConcat:
		return appendAnchored(steps, re.Sub)
	case syntax.OpAlternate:
		alt := anchoredStep{kind: stepAlt}
		for _, sub := range re.Sub {
			b, ok := appendAnchoredOne(nil, sub)
			if !ok {
				return nil, false
			}
			alt.branches = append(alt.branches, b)
		}
		return append(steps, alt), true
	}
	return nil, false // repetitions, other anchors, word boundaries
}

// appendClass appends one character of class c, folding it into the
// previous step when that is the same class ([a-z]{20} is one step).
func appendClass(steps []anchoredStep, c *runeClass, ranges []rune) []anchoredStep {
	if n := len(steps); n > 0 && steps[n-1].kind == stepClass && sameClass(steps[n-1].class, c, ranges) {
		steps[n-1].n++
		return steps
	}
	return append(steps, anchoredStep{kind: stepClass, class: c, n: 1})
}

func sameClass(a, b *runeClass, ranges []rune) bool {
	if a == b {
		return true
	}
	if ranges == nil || len(a.ranges) != len(ranges) {
		return false
	}
	for i := range ranges {
		if a.ranges[i] != ranges[i] {
			return false
		}
	}
	return true
}

// anchoredPaths counts the paths through steps (saturating past the bound).
func anchoredPaths(steps []anchoredStep) int {
	paths := 1
	for _, st := range steps {
		if st.kind != stepAlt {
			continue
		}
		sum := 0
		for _, b := range st.branches {
			sum += anchoredPaths(b)
			if sum > maxAnchoredPaths {
				return maxAnchoredPaths + 1
			}
		}
		if paths *= sum; paths > maxAnchoredPaths {
			return maxAnchoredPaths + 1
		}
	}
	return paths
}

// anchoredNode is a program with its alternations unfolded into a tree:
// steps without alternations, then one child per way to go on (none: the
// match is complete). What follows an alternation is copied into each
// branch, which maxAnchoredPaths keeps small.
type anchoredNode struct {
	steps    []anchoredStep
	children []*anchoredNode
}

func unfoldAnchored(steps []anchoredStep) *anchoredNode {
	for i, st := range steps {
		if st.kind != stepAlt {
			continue
		}
		n := &anchoredNode{steps: steps[:i:i]}
		for _, b := range st.branches {
			cont := append(append([]anchoredStep(nil), b...), steps[i+1:]...)
			n.children = append(n.children, unfoldAnchored(cont))
		}
		return n
	}
	return &anchoredNode{steps: steps}
}

// match reports whether a match starts at the beginning of s.
func (p *anchoredProgram) match(s string) bool {
	return p.root.match(s, 0)
}

func (n *anchoredNode) match(s string, pos int) bool {
	for i := range n.steps {
		st := &n.steps[i]
		switch st.kind {
		case stepLiteral:
			if !strings.HasPrefix(s[pos:], st.lit) {
				return false
			}
			pos += len(st.lit)
		case stepClass:
			if c := st.class; c.asciiOnly {
				// One byte a character: a byte beyond ASCII starts a
				// character (or is an invalid one) the class lacks.
				if len(s)-pos < st.n {
					return false
				}
				for _, b := range []byte(s[pos : pos+st.n]) {
					if b >= utf8.RuneSelf || c.ascii[b>>6]&(1<<(b&63)) == 0 {
						return false
					}
				}
				pos += st.n
				continue
			}
			for k := 0; k < st.n; k++ {
				if pos >= len(s) {
					return false
				}
				r, w := rune(s[pos]), 1
				if r >= utf8.RuneSelf {
					// An invalid byte reads as U+FFFD, one byte wide, as
					// in Go's regexp.
					r, w = utf8.DecodeRuneInString(s[pos:])
				}
				if !st.class.has(r) {
					return false
				}
				pos += w
			}
		case stepEnd:
			if pos != len(s) {
				return false
			}
		}
	}
	if n.children == nil {
		return true
	}
	for _, c := range n.children {
		if c.match(s, pos) {
			return true
		}
	}
	return false
}
