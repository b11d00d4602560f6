package engine

import (
	"strings"
	"unsafe"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/scan"
)

// pred is a compiled pushed-down predicate. What it means on a value is
// internal/predicate's, shared with the SQL evaluator (which must return
// the same rows with pushdown off) and LQL's matcher; this file applies it
// to a block's column, and scanimpl.go to the index and block statistics.
type pred struct {
	scan.Predicate
	cmp    predicate.Op        // Eq … Ge as predicate's
	set    map[string]struct{} // In over strings
	intSet map[int64]struct{}  // In over ints
	fltSet map[float64]struct{}
	re     *predicate.Regex
	like   *predicate.Like
	// lit is a substring every match must contain (a LIKE pattern's
	// longest literal, the needle of Contains); litExact means the literal
	// alone decides. The token index looks lit up. (A regex's literals
	// are anyOf.)
	lit      string
	litExact bool
	// anyOf, for a regex, are literals of which every match contains one
	// (an alternation's branches); anyExact means containing one decides.
	// The token index looks them up.
	anyOf    []regexLit
	anyExact bool
	// cacheKey names the predicate in the predicate cache ("": not
	// cached; predcache.go).
	cacheKey string
	// search finds, in a column's values laid end to end, those that may
	// pass a regex, LIKE or substring test (nil: value by value);
	// searchExact: those it finds all pass (scaneval.go).
	search      *predicate.Searcher
	searchExact bool
}

// regexLit is a literal a regex match contains, compared ASCII
// case-insensitively (s lower case) when fold is set.
type regexLit struct {
	s    string
	fold bool
}

// cmpOps maps the scan's comparison operators onto predicate's.
var cmpOps = [...]predicate.Op{scan.Eq: predicate.Eq, scan.Ne: predicate.Ne, scan.Lt: predicate.Lt,
	scan.Le: predicate.Le, scan.Gt: predicate.Gt, scan.Ge: predicate.Ge}

func compilePred(p scan.Predicate) (*pred, error) {
	cp := &pred{Predicate: p}
	if int(p.Op) < len(cmpOps) {
		cp.cmp = cmpOps[p.Op]
	}
	switch p.Op {
	case scan.In:
		switch {
		case p.Type == vec.String:
			cp.set = make(map[string]struct{}, len(p.Args))
			for _, a := range p.Args {
				if !a.Null {
					cp.set[a.Str] = struct{}{}
				}
			}
		case p.Type == vec.Float64:
			cp.fltSet = map[float64]struct{}{}
			for _, a := range p.Args {
				if !a.Null {
					cp.fltSet[a.Flt] = struct{}{}
				}
			}
		default:
			cp.intSet = map[int64]struct{}{}
			for _, a := range p.Args {
				switch {
				case a.Null:
				case p.Type == vec.Bool:
					// A bool argument's Int is unset: only its Bool counts.
					cp.intSet[b2i(a.Bool)] = struct{}{}
				default:
					cp.intSet[a.Int] = struct{}{}
				}
			}
		}
	case scan.Regex:
		if p.Regex != nil {
			cp.re = predicate.NewRegex(p.Regex)
		} else {
			re, err := predicate.CompileRegex(p.Args[0].Str)
			if err != nil {
				return nil, err
			}
			cp.re = re
		}
		lits, exact := cp.re.Required()
		for _, l := range lits {
			ok, ex := foldLitIndexable(l)
			if !ok {
				cp.anyOf = nil // the index could miss rows with this one
				break
			}
			exact = exact && ex
			cp.anyOf = append(cp.anyOf, regexLit{s: l.S, fold: l.Fold})
		}
		cp.anyExact = exact
		cp.search, cp.searchExact = cp.re.Searcher()
	case scan.Contains:
		cp.lit, cp.litExact = p.Args[0].Str, true
		cp.search, cp.searchExact = predicate.NewSearcher([]string{cp.lit}), true
	case scan.Like:
		like, err := predicate.CompileLike(p.Args[0].Str)
		if err != nil {
			return nil, err
		}
		cp.like = like
		cp.lit, cp.litExact = like.Required()
		cp.search, cp.searchExact = like.Searcher()
	}
	cp.cacheKey = predCacheKeyOf(cp)
	return cp, nil
}

// foldLitIndexable says whether the token index, which compares a
// case-insensitive literal with its terms lower-cased by strings.ToLower,
// finds every row whose text the regex's case folding matches (ok), and
// only those (exact). Two runes make the difference for ASCII literals:
// ſ (U+017F) folds to s but lower-cases to itself, so a literal with an s
// would miss it; İ (U+0130) lower-cases to i but does not fold to it, so
// a literal with an i would find rows the regex does not match. (The
// Kelvin sign K does both, consistently.)
func foldLitIndexable(l predicate.Lit) (ok, exact bool) {
	if !l.Fold {
		return true, true
	}
	if strings.ContainsAny(l.S, "sS") {
		return false, false
	}
	return true, !strings.ContainsAny(l.S, "iI")
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// matchString evaluates a string predicate on one value (not NULL).
func (p *pred) matchString(s string) bool {
	var r bool
	switch p.Op {
	case scan.Eq, scan.Ne, scan.Lt, scan.Le, scan.Gt, scan.Ge:
		return predicate.Holds(p.cmp, s, p.Args[0].Str)
	case scan.In:
		_, r = p.set[s]
	case scan.Contains:
		r = strings.Contains(s, p.lit)
	case scan.StartsWith:
		r = strings.HasPrefix(s, p.Args[0].Str)
	case scan.EndsWith:
		r = strings.HasSuffix(s, p.Args[0].Str)
	case scan.Regex:
		r = p.re.Match(s)
	case scan.Like:
		r = p.like.Match(s)
	}
	return r != p.Not
}

// cmpOK answers a comparison operator from a three-way comparison.
func cmpOK(op scan.Op, c int) bool {
	if int(op) >= len(cmpOps) {
		return false
	}
	return predicate.HoldsOrder(cmpOps[op], c)
}

func cmpInt(a, b int64) int { return predicate.CompareInt(a, b) }

// eval returns the rows of sel (nil = every row of v) for which the
// predicate is TRUE. v is read as p.Type.
func (p *pred) eval(v *vec.Vector, sel []int32) []int32 {
	n := v.Len
	out := make([]int32, 0, selLen(sel, n)/4+8)
	each := func(keep func(i int) bool) {
		if sel == nil {
			for i := 0; i < n; i++ {
				if keep(i) {
					out = append(out, int32(i))
				}
			}
			return
		}
		for _, i := range sel {
			if keep(int(i)) {
				out = append(out, i)
			}
		}
	}
	nulls := v.Nulls
	isNull := func(i int) bool { return nulls != nil && nulls.Get(i) }
	switch p.Op {
	case scan.IsNull:
		each(func(i int) bool { return isNull(i) })
		return out
	case scan.IsNotNull:
		each(func(i int) bool { return !isNull(i) })
		return out
	}
	switch v.Type {
	case vec.String, vec.JSON:
		if v.Dict != nil {
			// Decide each dictionary entry the rows use, once.
			decided := make([]uint8, len(v.Dict)) // 0 not yet, 1 no, 2 yes
			dict, codes := v.Dict, v.Codes
			each(func(i int) bool {
				if isNull(i) {
					return false
				}
				c := codes[i]
				if decided[c] == 0 {
					decided[c] = 1
					if p.matchString(dict[c]) {
						decided[c] = 2
					}
				}
				return decided[c] == 2
			})
			return out
		}
		if v.IsBytes() {
			data, offs := v.Bytes, v.Offs
			if rows, ok := p.searchValues(p.search, data, offs, n, nulls, sel); ok {
				return rows
			}
			each(func(i int) bool {
				if isNull(i) {
					return false
				}
				a, z := offs[i], offs[i+1]
				if a == z {
					return p.matchString("")
				}
				return p.matchString(unsafe.String(&data[a], int(z-a)))
			})
			return out
		}
		strs := v.Strs
		each(func(i int) bool { return !isNull(i) && p.matchString(strs[i]) })
	case vec.Float64:
		fl := v.Floats
		if p.Op == scan.In {
			each(func(i int) bool {
				_, ok := p.fltSet[fl[i]]
				return !isNull(i) && ok != p.Not
			})
			return out
		}
		x, op := p.Args[0].Flt, p.cmp
		each(func(i int) bool { return !isNull(i) && predicate.Holds(op, fl[i], x) })
	case vec.Bool:
		bs := v.Bools
		if p.Op == scan.In {
			each(func(i int) bool {
				_, ok := p.intSet[b2i(bs[i])]
				return !isNull(i) && ok != p.Not
			})
			return out
		}
		x, op := b2i(p.Args[0].Bool), p.cmp
		each(func(i int) bool { return !isNull(i) && predicate.Holds(op, b2i(bs[i]), x) })
	default: // ints
		is := v.Ints
		if p.Op == scan.In {
			each(func(i int) bool {
				_, ok := p.intSet[is[i]]
				return !isNull(i) && ok != p.Not
			})
			return out
		}
		x, op := p.Args[0].Int, p.cmp
		if nulls == nil && sel == nil {
			// The common case, kept tight: no nulls, every row.
			return predicate.AppendMatches(out, op, is[:n], x)
		}
		each(func(i int) bool { return !isNull(i) && predicate.Holds(op, is[i], x) })
	}
	return out
}

func selLen(sel []int32, n int) int {
	if sel == nil {
		return n
	}
	return len(sel)
}
