package predicate

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Like is a compiled SQL LIKE pattern: % matches any run of characters,
// _ exactly one character, and a backslash makes the next character a
// literal. The common shapes (literal, literal%, %literal, %literal%, %)
// run as plain string operations; the rest walk the pattern with one
// backtracking point (the last %), so matching is O(len(s) × len(pattern))
// at worst, never exponential.
type Like struct {
	shape likeShape
	lit   string // the literal of the plain shapes
	toks  []likeTok
	need  string // the general shape's longest literal, which a match contains
}

type likeShape uint8

const (
	likeGeneral  likeShape = iota
	likeEqual              // literal
	likePrefix             // literal%
	likeSuffix             // %literal
	likeContains           // %literal%
	likeAny                // %
)

type likeTok struct {
	kind byte // 'l' literal run, '_' one character, '%' any run
	lit  string
}

// errLikeBackslash is the error for a pattern whose last character is an
// unpaired escape.
var errLikeBackslash = errors.New("LIKE pattern ends with a backslash")

// CompileLike compiles a LIKE pattern. The only error is a pattern ending
// in an unpaired backslash. Patterns are read byte by byte, so invalid
// UTF-8 in them matches the same bytes in the text.
func CompileLike(pattern string) (*Like, error) {
	var toks []likeTok
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, likeTok{kind: 'l', lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '\\':
			if i+1 >= len(pattern) {
				return nil, errLikeBackslash
			}
			i++
			lit.WriteByte(pattern[i])
		case '%':
			flush()
			if len(toks) == 0 || toks[len(toks)-1].kind != '%' {
				toks = append(toks, likeTok{kind: '%'})
			}
		case '_':
			flush()
			toks = append(toks, likeTok{kind: '_'})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	l := &Like{toks: toks}
	var kinds [4]byte
	if len(toks) <= len(kinds) {
		for i, t := range toks {
			kinds[i] = t.kind
		}
		switch string(kinds[:len(toks)]) {
		case "":
			l.shape = likeEqual
		case "l":
			l.shape, l.lit = likeEqual, toks[0].lit
		case "%":
			l.shape = likeAny
		case "l%":
			l.shape, l.lit = likePrefix, toks[0].lit
		case "%l":
			l.shape, l.lit = likeSuffix, toks[1].lit
		case "%l%":
			l.shape, l.lit = likeContains, toks[1].lit
		}
	}
	if l.shape == likeGeneral {
		l.need, _ = l.Required()
	}
	return l, nil
}

// Required returns the pattern's longest literal run, which every match
// contains ("" when there is none), and whether containing it decides the
// match (the pattern is %literal%). A token index looks the literal up.
func (l *Like) Required() (lit string, exact bool) {
	for _, t := range l.toks {
		if t.kind == 'l' && len(t.lit) > len(lit) {
			lit = t.lit
		}
	}
	return lit, l.shape == likeContains
}

// Match reports whether s matches the whole pattern.
func (l *Like) Match(s string) bool {
	switch l.shape {
	case likeEqual:
		return s == l.lit
	case likePrefix:
		return strings.HasPrefix(s, l.lit)
	case likeSuffix:
		return strings.HasSuffix(s, l.lit)
	case likeContains:
		return strings.Contains(s, l.lit)
	case likeAny:
		return true
	}
	if l.need != "" && !strings.Contains(s, l.need) {
		return false
	}
	return likeMatch(l.toks, s)
}

// likeMatch matches tokens against s, letting the last % take one more
// character on a mismatch.
func likeMatch(toks []likeTok, s string) bool {
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
		if starT < 0 || starS >= len(s) {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[starS:])
		starS += size
		ti, si = starT+1, starS
	}
}
