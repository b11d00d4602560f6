package fn

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
)

// String functions. Positions and lengths count characters (Unicode code
// points) as BigQuery does for STRING. BYTES do not exist in this engine:
// the hash functions (MD5, SHA256, ...) return their raw bytes in a STRING,
// which TO_HEX and TO_BASE64 then encode.

// maxResultBytes bounds the strings that REPEAT, LPAD, REPLACE, ... build,
// so that a query cannot ask for gigabytes.
const maxResultBytes = 16 << 20

func tooLarge(name string) error {
	return fmt.Errorf("%s: result exceeds the maximum size of %d bytes", name, maxResultBytes)
}

func init() {
	register("lower", bindStrMap(strings.ToLower))
	register("upper", bindStrMap(strings.ToUpper))
	register("reverse", bindStrMap(reverseString))
	register("length", bindStrInt(func(s string) int64 { return int64(utf8.RuneCountInString(s)) }),
		"char_length", "character_length")
	register("byte_length", bindStrInt(func(s string) int64 { return int64(len(s)) }))
	register("starts_with", bindStrPredicate(strings.HasPrefix))
	register("ends_with", bindStrPredicate(strings.HasSuffix))
	register("strpos", bindStrpos)
	register("instr", bindInstr)
	register("contains_substr", bindContainsSubstr)
	register("substr", bindSubstr, "substring")
	register("concat", bindConcat)
	register("||", bindConcat)
	register("trim", bindTrim(true, true))
	register("ltrim", bindTrim(true, false))
	register("rtrim", bindTrim(false, true))
	register("split", bindSplit)
	register("replace", bindReplace)
	register("repeat", bindRepeat)
	register("left", bindLeftRight(true))
	register("right", bindLeftRight(false))
	register("lpad", bindPad(true))
	register("rpad", bindPad(false))
	register("initcap", bindInitcap)
	register("to_hex", bindStrMap(func(s string) string { return hex.EncodeToString([]byte(s)) }))
	register("to_base64", bindStrMap(func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }))
	register("md5", bindStrMap(func(s string) string { h := md5.Sum([]byte(s)); return string(h[:]) }))
	register("sha1", bindStrMap(func(s string) string { h := sha1.Sum([]byte(s)); return string(h[:]) }))
	register("sha256", bindStrMap(func(s string) string { h := sha256.Sum256([]byte(s)); return string(h[:]) }))
	register("sha512", bindStrMap(func(s string) string { h := sha512.Sum512([]byte(s)); return string(h[:]) }))
	register("from_hex", bindFromHex)
	register("from_base64", bindFromBase64)
}

// isASCII reports whether s has only 7-bit characters.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runeOffset returns the byte offset of the k-th character of s (len(s)
// when k is past the end).
func runeOffset(s string, k int) int {
	if k <= 0 {
		return 0
	}
	for i := range s {
		if k == 0 {
			return i
		}
		k--
	}
	return len(s)
}

// charLen returns the number of characters of s.
func charLen(s string) int {
	if isASCII(s) {
		return len(s)
	}
	return utf8.RuneCountInString(s)
}

func reverseString(s string) string {
	if isASCII(s) {
		b := []byte(s)
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return string(b)
	}
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// strMapEval applies f to every row of a STRING vector.
func strMapEval(f func(string) string) EvalFunc {
	return func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		x := vs[0]
		out := &vec.Vector{Type: vec.String, Len: n, Strs: make([]string, n), Nulls: x.Nulls}
		forRows(sel, n, func(i int) {
			if x.Nulls == nil || !x.Nulls.Get(i) {
				out.Strs[i] = f(x.StringAt(i))
			}
		})
		return out, nil
	}
}

// bindStrMap binds a STRING -> STRING function.
func bindStrMap(f func(string) string) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		if _, err := match(name, args, 1, vec.String); err != nil {
			return nil, err
		}
		return newKernel(vec.String, strMapEval(f)).bound(), nil
	}
}

// bindStrInt binds a STRING -> INT64 function.
func bindStrInt(f func(string) int64) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		if _, err := match(name, args, 1, vec.String); err != nil {
			return nil, err
		}
		return newKernel(vec.Int64, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			x := vs[0]
			out := &vec.Vector{Type: vec.Int64, Len: n, Ints: make([]int64, n), Nulls: x.Nulls}
			forRows(sel, n, func(i int) { out.Ints[i] = f(x.StringAt(i)) })
			return out, nil
		}).bound(), nil
	}
}

// rowEval builds an eval from a per-row body over non-NULL rows.
func rowEval(typ vec.Type, safe bool, f func(vs []*vec.Vector, i int, out *vec.Vector) error) EvalFunc {
	return func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		out := newVec(typ, n)
		err := rowLoop(out, vs, sel, n, safe, func(i int) error { return f(vs, i, out) })
		return out, err
	}
}

// listEval builds an eval producing one array per row with f appending the
// elements; rows with a NULL argument (or f returning errNull, or an error
// in safe mode) are NULL arrays.
func listEval(elem vec.Type, safe bool, f func(vs []*vec.Vector, i int, b *listBuilder) error) EvalFunc {
	return func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		b := newListBuilder(elem, n)
		var nulls vec.Bitset
		setRowNull := func(i int) {
			if nulls == nil {
				nulls = vec.NewBitset(n)
			}
			nulls.Set(i)
		}
		next := 0
		for i := 0; i < n; i++ {
			if sel != nil {
				if next < len(sel) && int(sel[next]) == i {
					next++
				} else {
					b.endRow()
					continue
				}
			}
			if anyNullAt(vs, i) {
				setRowNull(i)
				b.endRow()
				continue
			}
			mark := b.nElem
			if err := f(vs, i, b); err != nil {
				b.truncate(mark)
				if err != errNull && !safe {
					return nil, err
				}
				setRowNull(i)
			}
			b.endRow()
		}
		out := b.finish(n)
		out.Nulls = nulls
		return out, nil
	}
}

// truncate drops the elements appended after the first k.
func (b *listBuilder) truncate(k int) {
	e := b.elem
	switch t := e.Type; {
	case t == vec.Bool:
		e.Bools = e.Bools[:k]
	case t == vec.Float64:
		e.Floats = e.Floats[:k]
	case t == vec.String || t == vec.JSON:
		e.Strs = e.Strs[:k]
	case t.UsesInts():
		e.Ints = e.Ints[:k]
	}
	for j := k; j < b.nElem; j++ {
		e.Nulls.Clear(j)
	}
	b.nElem = k
}

// dictArgOf picks the argument to evaluate per dictionary entry: the only
// non-constant one (or the first when all are constant).
func dictArgOf(args []Arg) int {
	idx := -1
	for i, a := range args {
		if a.Const == nil && a.Part == "" {
			if idx >= 0 {
				return -1
			}
			idx = i
		}
	}
	if idx < 0 {
		return 0
	}
	return idx
}

func bindStrPredicate(f func(s, t string) bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		convs, err := match(name, args, 2, vec.String, vec.String)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.Bool, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			a, b := vs[0], vs[1]
			out := &vec.Vector{Type: vec.Bool, Len: n, Bools: make([]bool, n), Nulls: unionNulls(n, a, b)}
			forRows(sel, n, func(i int) { out.Bools[i] = f(a.StringAt(i), b.StringAt(i)) })
			return out, nil
		})
		k.convs, k.dictArg = convs, dictArgOf(args)
		return k.bound(), nil
	}
}

func bindStrpos(name string, args []Arg, _ BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.Int64, rowEval(vec.Int64, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		s := vs[0].StringAt(i)
		at := strings.Index(s, vs[1].StringAt(i))
		if at >= 0 {
			out.Ints[i] = int64(charLen(s[:at])) + 1
		}
		return nil
	}))
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

func bindInstr(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.String, vec.Int64, vec.Int64)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.Int64, rowEval(vec.Int64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		pos, occ := int64(1), int64(1)
		if len(vs) > 2 {
			pos = vs[2].IntAt(i)
		}
		if len(vs) > 3 {
			occ = vs[3].IntAt(i)
		}
		r, err := instr(vs[0].StringAt(i), vs[1].StringAt(i), pos, occ)
		out.Ints[i] = r
		return err
	}))
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

// instr returns the 1-based character position of the occ-th occurrence of
// sub in s, searching forward from pos (> 0) or backward from the pos-th
// character from the end (< 0); occurrences may overlap. 0: not found.
func instr(s, sub string, pos, occ int64) (int64, error) {
	if pos == 0 {
		return 0, fmt.Errorf("INSTR: the position must not be 0")
	}
	if occ <= 0 {
		return 0, fmt.Errorf("INSTR: the occurrence must be positive, got %d", occ)
	}
	rs, subr := []rune(s), []rune(sub)
	n, m := int64(len(rs)), int64(len(subr))
	at := func(k int64) bool {
		if k < 0 || k+m > n {
			return false
		}
		for j := int64(0); j < m; j++ {
			if rs[k+j] != subr[j] {
				return false
			}
		}
		return true
	}
	if pos > 0 {
		for k := pos - 1; k+m <= n; k++ {
			if at(k) {
				if occ--; occ == 0 {
					return k + 1, nil
				}
			}
		}
		return 0, nil
	}
	start := n + pos
	if start+m > n {
		start = n - m
	}
	for k := start; k >= 0; k-- {
		if at(k) {
			if occ--; occ == 0 {
				return k + 1, nil
			}
		}
	}
	return 0, nil
}

func bindSubstr(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.Int64, vec.Int64)
	if err != nil {
		return nil, err
	}
	hasLen := len(args) == 3
	k := newKernel(vec.String, rowEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		length := int64(-1)
		if hasLen {
			if length = vs[2].IntAt(i); length < 0 {
				return fmt.Errorf("Third argument in %s() cannot be negative", name)
			}
		}
		out.Strs[i] = substr(vs[0].StringAt(i), vs[1].IntAt(i), length)
		return nil
	}))
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

// substr implements SUBSTR: 1-based position (0 is 1, negative counts from
// the end), length < 0 meaning "to the end".
func substr(s string, pos, length int64) string {
	n := int64(charLen(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = n + pos
		if start < 0 {
			start = 0
		}
	}
	if start >= n {
		return ""
	}
	end := n
	if length >= 0 && length < n-start {
		end = start + length
	}
	if int64(len(s)) == n {
		return s[start:end]
	}
	lo := runeOffset(s, int(start))
	hi := lo + runeOffset(s[lo:], int(end-start))
	return s[lo:hi]
}

// toStringConv returns the coercion of an argument to STRING for CONCAT and
// friends (BigQuery casts values that can be cast to STRING).
func toStringConv(name string, args []Arg, a Arg) (conv, error) {
	switch a.Type {
	case vec.String, vec.Unknown:
		return nil, nil
	case vec.Int64, vec.Float64, vec.Bool, vec.Timestamp, vec.Datetime, vec.Date, vec.JSON:
		k := castKernel(a.Type, vec.String, false)
		return func(ec *EvalCtx, v *vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			return k.run(ec, []*vec.Vector{v}, sel, n)
		}, nil
	}
	return nil, sigError(name, args)
}

func bindConcat(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if len(args) == 0 || (name == "||" && len(args) != 2) {
		return nil, arityError(name)
	}
	convs := make([]conv, len(args))
	for i, a := range args {
		if a.Part != "" {
			return nil, sigError(name, args)
		}
		c, err := toStringConv(name, args, a)
		if err != nil {
			return nil, err
		}
		convs[i] = c
	}
	k := newKernel(vec.String, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		out := newVec(vec.String, n)
		err := rowLoop(out, vs, sel, n, false, func(i int) error {
			switch len(vs) {
			case 1:
				out.Strs[i] = vs[0].StringAt(i)
			case 2:
				out.Strs[i] = vs[0].StringAt(i) + vs[1].StringAt(i)
			default:
				total := 0
				for _, v := range vs {
					total += len(v.StringAt(i))
				}
				var b strings.Builder
				b.Grow(total)
				for _, v := range vs {
					b.WriteString(v.StringAt(i))
				}
				out.Strs[i] = b.String()
			}
			return nil
		})
		return out, err
	})
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

func bindTrim(left, right bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		convs, err := match(name, args, 1, vec.String, vec.String)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.String, rowEval(vec.String, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			s := vs[0].StringAt(i)
			if len(vs) == 1 {
				switch {
				case left && right:
					s = strings.TrimFunc(s, unicode.IsSpace)
				case left:
					s = strings.TrimLeftFunc(s, unicode.IsSpace)
				default:
					s = strings.TrimRightFunc(s, unicode.IsSpace)
				}
			} else {
				set := vs[1].StringAt(i)
				if left {
					s = strings.TrimLeft(s, set)
				}
				if right {
					s = strings.TrimRight(s, set)
				}
			}
			out.Strs[i] = s
			return nil
		}))
		k.convs, k.dictArg = convs, dictArgOf(args)
		return k.bound(), nil
	}
}

func bindSplit(name string, args []Arg, _ BindInfo) (*Bound, error) {
	convs, err := match(name, args, 1, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.List, listEval(vec.String, false, func(vs []*vec.Vector, i int, b *listBuilder) error {
		s, delim := vs[0].StringAt(i), ","
		if len(vs) > 1 {
			delim = vs[1].StringAt(i)
		}
		switch {
		case s == "":
			b.appendString("")
		case delim == "":
			for _, r := range s {
				b.appendString(string(r))
			}
		default:
			for {
				at := strings.Index(s, delim)
				if at < 0 {
					b.appendString(s)
					break
				}
				b.appendString(s[:at])
				s = s[at+len(delim):]
			}
		}
		return nil
	}))
	k.elem = vec.String
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

func bindReplace(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 3, vec.String, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.String, rowEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		s, from, to := vs[0].StringAt(i), vs[1].StringAt(i), vs[2].StringAt(i)
		if from == "" {
			out.Strs[i] = s
			return nil
		}
		if len(to) > len(from) {
			if c := strings.Count(s, from); int64(len(s))+int64(c)*int64(len(to)-len(from)) > maxResultBytes {
				return tooLarge(name)
			}
		}
		out.Strs[i] = strings.ReplaceAll(s, from, to)
		return nil
	}))
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

func bindRepeat(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.Int64)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.String, rowEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		s, n := vs[0].StringAt(i), vs[1].IntAt(i)
		if n < 0 {
			return fmt.Errorf("%s: the number of repetitions must not be negative, got %d", name, n)
		}
		if len(s) > 0 && n > maxResultBytes/int64(len(s)) {
			return tooLarge(name)
		}
		out.Strs[i] = strings.Repeat(s, int(n))
		return nil
	}))
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

func bindLeftRight(left bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		convs, err := match(name, args, 2, vec.String, vec.Int64)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.String, rowEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			s, length := vs[0].StringAt(i), vs[1].IntAt(i)
			if length < 0 {
				return fmt.Errorf("%s: the length must not be negative, got %d", name, length)
			}
			n := int64(charLen(s))
			switch {
			case length >= n:
				out.Strs[i] = s
			case left:
				out.Strs[i] = s[:runeOffset(s, int(length))]
			default:
				out.Strs[i] = s[runeOffset(s, int(n-length)):]
			}
			return nil
		}))
		k.convs, k.dictArg = convs, dictArgOf(args)
		return k.bound(), nil
	}
}

func bindPad(left bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		convs, err := match(name, args, 2, vec.String, vec.Int64, vec.String)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.String, rowEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			s, length, pattern := vs[0].StringAt(i), vs[1].IntAt(i), " "
			if len(vs) > 2 {
				pattern = vs[2].StringAt(i)
			}
			r, err := pad(name, s, length, pattern, left)
			out.Strs[i] = r
			return err
		}))
		k.convs, k.dictArg = convs, dictArgOf(args)
		return k.bound(), nil
	}
}

// pad implements LPAD/RPAD on characters.
func pad(name, s string, length int64, pattern string, left bool) (string, error) {
	if length < 0 {
		return "", fmt.Errorf("%s: the return length must not be negative, got %d", name, length)
	}
	n := int64(charLen(s))
	if length <= n {
		return s[:runeOffset(s, int(length))], nil
	}
	if pattern == "" {
		return "", fmt.Errorf("%s: the pattern must not be empty", name)
	}
	if length > maxResultBytes/utf8.UTFMax {
		return "", tooLarge(name)
	}
	need := int(length - n)
	var fill strings.Builder
	pn := charLen(pattern)
	for need >= pn {
		fill.WriteString(pattern)
		need -= pn
	}
	fill.WriteString(pattern[:runeOffset(pattern, need)])
	if left {
		return fill.String() + s, nil
	}
	return s + fill.String(), nil
}

// initcapDelims are INITCAP's default word delimiters.
const initcapDelims = " [](){}/|\\<>!?@\"^#$&~_,.:;*%+-\t\n\r\v\f"

func bindInitcap(name string, args []Arg, _ BindInfo) (*Bound, error) {
	convs, err := match(name, args, 1, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.String, rowEval(vec.String, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		delims := initcapDelims
		if len(vs) > 1 {
			delims = vs[1].StringAt(i)
		}
		var b strings.Builder
		s := vs[0].StringAt(i)
		b.Grow(len(s))
		start := true
		for _, r := range s {
			if strings.ContainsRune(delims, r) {
				b.WriteRune(r)
				start = true
				continue
			}
			if start {
				b.WriteRune(unicode.ToUpper(r))
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
			start = false
		}
		out.Strs[i] = b.String()
		return nil
	}))
	k.convs, k.dictArg = convs, dictArgOf(args)
	return k.bound(), nil
}

func bindFromHex(name string, args []Arg, info BindInfo) (*Bound, error) {
	if _, err := match(name, args, 1, vec.String); err != nil {
		return nil, err
	}
	return newKernel(vec.String, rowEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		s := vs[0].StringAt(i)
		if len(s)%2 == 1 {
			s = "0" + s
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return fmt.Errorf("%s: invalid hexadecimal input: %s", name, clipValue(vs[0].StringAt(i)))
		}
		out.Strs[i] = string(b)
		return nil
	})).bound(), nil
}

func bindFromBase64(name string, args []Arg, info BindInfo) (*Bound, error) {
	if _, err := match(name, args, 1, vec.String); err != nil {
		return nil, err
	}
	return newKernel(vec.String, rowEval(vec.String, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		b, err := base64.StdEncoding.DecodeString(vs[0].StringAt(i))
		if err != nil {
			return fmt.Errorf("%s: invalid base64 input: %s", name, clipValue(vs[0].StringAt(i)))
		}
		out.Strs[i] = string(b)
		return nil
	})).bound(), nil
}

// ---- CONTAINS_SUBSTR ----

func bindContainsSubstr(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 2, 3); err != nil {
		return nil, err
	}
	if args[1].Type != vec.String && args[1].Type != vec.Unknown {
		return nil, sigError(name, args)
	}
	scope := "JSON_VALUES"
	if len(args) == 3 {
		s, isNull, ok := constString(args[2])
		if !ok || isNull || args[2].Type != vec.String {
			return nil, fmt.Errorf("%s: json_scope must be a constant STRING", name)
		}
		scope = strings.ToUpper(s)
		if scope != "JSON_VALUES" && scope != "JSON_KEYS" && scope != "JSON_KEYS_AND_VALUES" {
			return nil, fmt.Errorf("%s: invalid json_scope %q", name, s)
		}
	}
	convs := make([]conv, len(args))
	jsonLike := false
	switch args[0].Type {
	case vec.RowRef:
		convs[0], jsonLike = convMaterialize, true
	case vec.JSON:
		jsonLike = true
	case vec.List, vec.Struct:
		convs[0], jsonLike = convMaterialize, true
	default:
		c, err := toStringConv(name, args, args[0])
		if err != nil {
			return nil, err
		}
		convs[0] = c
	}
	var fixed string
	isFixed := false
	if s, isNull, ok := constString(args[1]); ok && !isNull {
		fixed, isFixed = strings.ToLower(s), true
	}
	k := newKernel(vec.Bool, rowEval(vec.Bool, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		needle := fixed
		if !isFixed {
			needle = strings.ToLower(vs[1].StringAt(i))
		}
		s := vs[0].StringAt(i)
		if jsonLike {
			out.Bools[i] = jsonContainsFold(s, needle, scope)
		} else {
			out.Bools[i] = predicate.ContainsFold(s, needle)
		}
		return nil
	}))
	k.convs = convs
	return k.bound(), nil
}
