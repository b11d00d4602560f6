package engine

import (
	"regexp"
	"strings"
	"unsafe"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/scan"
)

// pred is a compiled pushed-down predicate.
type pred struct {
	scan.Predicate
	set    map[string]struct{} // In over strings
	intSet map[int64]struct{}  // In over ints
	fltSet map[float64]struct{}
	re     *regexp.Regexp
	// lit is a substring every match must contain (a regex's or LIKE
	// pattern's longest literal, the needle of Contains); litExact means
	// the literal alone decides. The token index looks lit up.
	lit      string
	litExact bool
	// anyOf, for a regex, are literals of which every match contains one
	// (an alternation's branches); anyExact means containing one decides.
	anyOf    []regexLit
	anyExact bool
	anySet   litSet // anyOf, for matching
	like     *likeMatcher
}

func compilePred(p scan.Predicate) (*pred, error) {
	cp := &pred{Predicate: p}
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
		re := p.Regex
		if re == nil {
			var err error
			if re, err = regexp.Compile(p.Args[0].Str); err != nil {
				return nil, err
			}
		}
		cp.re = re
		rp := planRegex(re.String())
		cp.anyOf, cp.anyExact = rp.anyOf, rp.exact
		cp.anySet = newLitSet(rp.anyOf)
		if len(rp.anyOf) == 1 && !rp.anyOf[0].fold {
			cp.lit, cp.litExact = rp.anyOf[0].s, rp.exact
		}
	case scan.Contains:
		cp.lit, cp.litExact = p.Args[0].Str, true
	case scan.Like:
		cp.like = compileLike(p.Args[0].Str)
		cp.lit, cp.litExact = cp.like.required()
	}
	return cp, nil
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
	case scan.Eq:
		return s == p.Args[0].Str
	case scan.Ne:
		return s != p.Args[0].Str
	case scan.Lt:
		return s < p.Args[0].Str
	case scan.Le:
		return s <= p.Args[0].Str
	case scan.Gt:
		return s > p.Args[0].Str
	case scan.Ge:
		return s >= p.Args[0].Str
	case scan.In:
		_, r = p.set[s]
	case scan.Contains:
		r = strings.Contains(s, p.lit)
	case scan.StartsWith:
		r = strings.HasPrefix(s, p.Args[0].Str)
	case scan.EndsWith:
		r = strings.HasSuffix(s, p.Args[0].Str)
	case scan.Regex:
		switch {
		case len(p.anyOf) > 0 && !p.anySet.contains(s):
			r = false
		case len(p.anyOf) > 0 && p.anyExact:
			r = true
		default:
			r = p.re.MatchString(s)
		}
	case scan.Like:
		switch {
		case p.lit != "" && !strings.Contains(s, p.lit):
			r = false
		case p.litExact:
			r = true
		default:
			r = p.like.match(s)
		}
	}
	return r != p.Not
}

func cmpOK(op scan.Op, c int) bool {
	switch op {
	case scan.Eq:
		return c == 0
	case scan.Ne:
		return c != 0
	case scan.Lt:
		return c < 0
	case scan.Le:
		return c <= 0
	case scan.Gt:
		return c > 0
	case scan.Ge:
		return c >= 0
	}
	return false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return 2 // NaN: unordered, only != holds
}

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
		x := p.Args[0].Flt
		op := p.Op
		each(func(i int) bool { return !isNull(i) && cmpOK(op, cmpFloat(fl[i], x)) })
	case vec.Bool:
		bs := v.Bools
		if p.Op == scan.In {
			each(func(i int) bool {
				_, ok := p.intSet[b2i(bs[i])]
				return !isNull(i) && ok != p.Not
			})
			return out
		}
		x := b2i(p.Args[0].Bool)
		op := p.Op
		each(func(i int) bool { return !isNull(i) && cmpOK(op, cmpInt(b2i(bs[i]), x)) })
	default: // ints
		is := v.Ints
		if p.Op == scan.In {
			each(func(i int) bool {
				_, ok := p.intSet[is[i]]
				return !isNull(i) && ok != p.Not
			})
			return out
		}
		x := p.Args[0].Int
		op := p.Op
		if nulls == nil && sel == nil {
			// The common case, kept tight: no nulls, every row.
			for i := 0; i < n; i++ {
				if cmpOK(op, cmpInt(is[i], x)) {
					out = append(out, int32(i))
				}
			}
			return out
		}
		each(func(i int) bool { return !isNull(i) && cmpOK(op, cmpInt(is[i], x)) })
	}
	return out
}

func selLen(sel []int32, n int) int {
	if sel == nil {
		return n
	}
	return len(sel)
}
