package predicate

import "strings"

// litSet finds whether a string contains one of a set of literals. When
// the literals share a prefix (auth/v1/token, auth/v1/user) it searches
// for the prefix once and tries each literal where it occurs, instead of
// searching the string once per literal.
type litSet struct {
	lits    []Lit
	prefix  string // common prefix of case-sensitive literals (≥ minSharedPrefix bytes), or ""
	anyFold bool
}

// minSharedPrefix is the shortest shared prefix searched for instead of
// each literal.
const minSharedPrefix = 2

// litFind is what a search for literals found.
type litFind uint8

const (
	litAbsent litFind = iota
	litFound
	litUnsure // only case-folded literals were sought, in text beyond ASCII
)

func newLitSet(lits []Lit) litSet {
	ls := litSet{lits: lits}
	for _, l := range lits {
		ls.anyFold = ls.anyFold || l.Fold
	}
	if len(lits) < 2 || ls.anyFold {
		return ls
	}
	p := lits[0].S
	for _, l := range lits {
		n := 0
		for n < len(p) && n < len(l.S) && p[n] == l.S[n] {
			n++
		}
		p = p[:n]
	}
	if len(p) >= minSharedPrefix {
		ls.prefix = p
	}
	return ls
}

// find reports whether s contains one of the literals. A literal compared
// ignoring ASCII case is searched for as ASCII; where s has characters
// beyond ASCII, Unicode case folding (K, the Kelvin sign, matches (?i)k)
// might still find it, so the answer is then litUnsure, not litAbsent.
func (ls *litSet) find(s string) litFind {
	if ls.contains(s) {
		return litFound
	}
	if ls.anyFold && !isASCII(s) {
		return litUnsure
	}
	return litAbsent
}

func (ls *litSet) contains(s string) bool {
	if ls.prefix == "" {
		for _, l := range ls.lits {
			if l.Fold {
				if containsFoldASCII(s, l.S) {
					return true
				}
			} else if strings.Contains(s, l.S) {
				return true
			}
		}
		return false
	}
	for pos := 0; ; {
		i := strings.Index(s[pos:], ls.prefix)
		if i < 0 {
			return false
		}
		pos += i
		for _, l := range ls.lits {
			if strings.HasPrefix(s[pos:], l.S) {
				return true
			}
		}
		pos++
	}
}
