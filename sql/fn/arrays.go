package fn

import (
	"fmt"
	"math"
	"strings"

	"github.com/google/uuid"
	"github.com/sediment/sediment/internal/vec"
)

// Array functions (ARRAY values are vec.List vectors: Offsets into Elem),
// the GENERATE_*_ARRAY constructors, and small utilities (NET.HOST,
// GENERATE_UUID).

// Generated arrays are bounded: one array, and all arrays of one batch.
const (
	maxArrayElems = 1_000_000
	maxBatchElems = 16_000_000
)

func init() {
	register("array_length", bindArrayLength)
	register("array_to_string", bindArrayToString)
	register("array_reverse", bindArrayReverse)
	register("array_concat", bindArrayConcat)
	register("generate_array", bindGenerateArray)
	register("generate_timestamp_array", bindGenerateTimeArray(vec.Timestamp))
	register("generate_date_array", bindGenerateTimeArray(vec.Date))
	register("net.host", bindNetHost)
	register("generate_uuid", bindGenerateUUID)
}

// arrayArg checks that argument i is an ARRAY (or an untyped NULL).
func arrayArg(name string, args []Arg, i int) error {
	if i >= len(args) || (args[i].Type != vec.List && args[i].Type != vec.Unknown) || args[i].Part != "" {
		return sigError(name, args)
	}
	return nil
}

func bindArrayLength(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 1, 1); err != nil {
		return nil, err
	}
	if err := arrayArg(name, args, 0); err != nil {
		return nil, err
	}
	return timeKernel(vec.Int64, false, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		lo, hi := listRange(vs[0], i)
		out.Ints[i] = int64(hi - lo)
		return nil
	}), nil
}

func bindArrayToString(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 2, 3); err != nil {
		return nil, err
	}
	if err := arrayArg(name, args, 0); err != nil {
		return nil, err
	}
	for _, a := range args[1:] {
		if a.Type != vec.String && a.Type != vec.Unknown {
			return nil, sigError(name, args)
		}
	}
	return timeKernel(vec.String, false, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		arr, delim := vs[0], vs[1].StringAt(i)
		nullText, hasNullText := "", len(vs) > 2
		if hasNullText {
			nullText = vs[2].StringAt(i)
		}
		lo, hi := listRange(arr, i)
		var b strings.Builder
		first := true
		for j := lo; j < hi; j++ {
			var s string
			if arr.Elem.IsNull(j) || arr.Elem.Type == vec.Unknown {
				if !hasNullText {
					continue
				}
				s = nullText
			} else {
				s = scalarString(arr.Elem, j)
			}
			if !first {
				b.WriteString(delim)
			}
			first = false
			b.WriteString(s)
			if b.Len() > maxResultBytes {
				return tooLarge(name)
			}
		}
		out.Strs[i] = b.String()
		return nil
	}), nil
}

func bindArrayReverse(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 1, 1); err != nil {
		return nil, err
	}
	if err := arrayArg(name, args, 0); err != nil {
		return nil, err
	}
	k := newKernel(vec.List, func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		return listEval(vs[0].Elem.Type, info.Safe, func(vs []*vec.Vector, i int, b *listBuilder) error {
			lo, hi := listRange(vs[0], i)
			for j := hi - 1; j >= lo; j-- {
				b.appendFrom(vs[0].Elem, j)
			}
			return nil
		})(ec, vs, sel, n)
	})
	k.elem, k.dictArg = args[0].Elem, -1
	return k.bound(), nil
}

func bindArrayConcat(name string, args []Arg, info BindInfo) (*Bound, error) {
	if len(args) == 0 {
		return nil, arityError(name)
	}
	elem := vec.Unknown
	for i, a := range args {
		if err := arrayArg(name, args, i); err != nil {
			return nil, err
		}
		if a.Type == vec.List {
			if elem != vec.Unknown && a.Elem != elem {
				return nil, sigError(name, args)
			}
			elem = a.Elem
		}
	}
	k := newKernel(vec.List, func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		et := elem
		if et == vec.Unknown {
			et = vs[0].Elem.Type
		}
		total := 0
		return listEval(et, info.Safe, func(vs []*vec.Vector, i int, b *listBuilder) error {
			// Check the size first: nothing is appended to a failing row.
			rowLen := 0
			for _, v := range vs {
				lo, hi := listRange(v, i)
				rowLen += hi - lo
			}
			if total += rowLen; total > maxBatchElems {
				return fmt.Errorf("%s: the result has more than %d elements", name, maxBatchElems)
			}
			for _, v := range vs {
				lo, hi := listRange(v, i)
				for j := lo; j < hi; j++ {
					b.appendFrom(v.Elem, j)
				}
			}
			return nil
		})(ec, vs, sel, n)
	})
	k.elem, k.dictArg = elem, -1
	return k.bound(), nil
}

// bindGenerateArray binds GENERATE_ARRAY(start, end[, step]) over INT64 or
// FLOAT64; the end is included when reached.
func bindGenerateArray(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 2, 3); err != nil {
		return nil, err
	}
	t, err := numericArg(name, args)
	if err != nil {
		return nil, err
	}
	convs := make([]conv, len(args))
	if t == vec.Float64 {
		for i := range convs {
			convs[i] = convIntToFloat
		}
	}
	k := newKernel(vec.List, func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		total := 0
		return listEval(t, info.Safe, func(vs []*vec.Vector, i int, b *listBuilder) error {
			if t == vec.Int64 {
				start, end, step := vs[0].IntAt(i), vs[1].IntAt(i), int64(1)
				if len(vs) > 2 {
					step = vs[2].IntAt(i)
				}
				if step == 0 {
					return fmt.Errorf("%s: the step cannot be 0", name)
				}
				if (step > 0 && start > end) || (step < 0 && start < end) {
					return nil
				}
				count := (uint64(end-start)/uint64(absInt(step)) + 1)
				if step < 0 {
					count = uint64(start-end)/uint64(absInt(step)) + 1
				}
				if err := checkArraySize(name, int(min(count, maxArrayElems+1)), &total); err != nil {
					return err
				}
				x := start
				for c := uint64(0); c < count; c++ {
					b.appendInt(x)
					x += step
				}
				return nil
			}
			start, end, step := vs[0].FloatAt(i), vs[1].FloatAt(i), 1.0
			if len(vs) > 2 {
				step = vs[2].FloatAt(i)
			}
			if step == 0 || math.IsNaN(step) || math.IsNaN(start) || math.IsNaN(end) || math.IsInf(step, 0) {
				return fmt.Errorf("%s: invalid bounds or step", name)
			}
			if (step > 0 && start > end) || (step < 0 && start < end) {
				return nil
			}
			count := math.Floor((end-start)/step) + 1
			if count > maxArrayElems || math.IsInf(count, 0) {
				return fmt.Errorf("%s: the array would have more than %d elements", name, maxArrayElems)
			}
			if err := checkArraySize(name, int(count), &total); err != nil {
				return err
			}
			for c := 0; c < int(count); c++ {
				b.appendFloat(start + float64(c)*step)
			}
			return nil
		})(ec, vs, sel, n)
	})
	k.elem, k.convs, k.dictArg = t, convs, -1
	return k.bound(), nil
}

func absInt(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// checkArraySize enforces the per-array and per-batch element bounds.
func checkArraySize(name string, count int, total *int) error {
	if count > maxArrayElems {
		return fmt.Errorf("%s: the array would have more than %d elements", name, maxArrayElems)
	}
	if *total += count; *total > maxBatchElems {
		return fmt.Errorf("%s: the arrays would have more than %d elements in all", name, maxBatchElems)
	}
	return nil
}

// bindGenerateTimeArray binds GENERATE_TIMESTAMP_ARRAY(start, end, INTERVAL
// n unit) and GENERATE_DATE_ARRAY(start, end[, INTERVAL n unit]); element k
// is start + k*interval, up to and including end.
func bindGenerateTimeArray(t vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		minArgs := 3
		if t == vec.Date {
			minArgs = 2
		}
		if err := checkArity(name, args, minArgs, 3); err != nil {
			return nil, err
		}
		convs := make([]conv, len(args))
		for i := 0; i < 2; i++ {
			c, err := coerceArg(name, args, args[i], t)
			if err != nil {
				return nil, err
			}
			convs[i] = c
		}
		count, unit := int64(1), "DAY"
		if len(args) == 3 {
			var err error
			if count, unit, err = intervalArg(name, args, 2); err != nil {
				return nil, err
			}
		}
		if count == 0 {
			return nil, fmt.Errorf("%s: the step cannot be 0", name)
		}
		units := timestampUnits
		if t == vec.Date {
			units = dateUnits
		}
		if err := checkUnit(name, unit, units...); err != nil {
			return nil, err
		}
		add := func(x, k int64) (int64, error) {
			if mulOverflows(count, k) {
				return 0, fmt.Errorf("%s: overflow", name)
			}
			if t == vec.Timestamp {
				return timestampAddUnit(x, count*k, unit)
			}
			return dateAddUnit(x, count*k, unit)
		}
		// stepLen is the step in the value's unit (µs or days) when fixed.
		stepLen := unitMicros(unit)
		if t == vec.Date {
			stepLen /= microsPerDay
		}
		if stepLen != 0 {
			if mulOverflows(stepLen, absInt(count)) {
				return nil, fmt.Errorf("%s: the step is out of range", name)
			}
			stepLen *= absInt(count)
		}
		k := newKernel(vec.List, func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			total := 0
			return listEval(t, info.Safe, func(vs []*vec.Vector, i int, b *listBuilder) error {
				start, end := vs[0].IntAt(i), vs[1].IntAt(i)
				if (count > 0 && start > end) || (count < 0 && start < end) {
					return nil
				}
				// Fixed-length steps: the size is known before generating.
				if stepLen > 0 {
					n := uint64(end-start) / uint64(stepLen)
					if count < 0 {
						n = uint64(start-end) / uint64(stepLen)
					}
					if err := checkArraySize(name, int(min(n+1, maxArrayElems+1)), &total); err != nil {
						return err
					}
				}
				for k := int64(0); ; k++ {
					x, err := add(start, k)
					if err != nil {
						return nil // past the end of the representable range
					}
					if (count > 0 && x > end) || (count < 0 && x < end) {
						return nil
					}
					if stepLen == 0 { // MONTH, QUARTER, YEAR: counted as generated
						if k >= maxArrayElems {
							return fmt.Errorf("%s: the array would have more than %d elements", name, maxArrayElems)
						}
						if total++; total > maxBatchElems {
							return fmt.Errorf("%s: the arrays would have more than %d elements in all", name, maxBatchElems)
						}
					}
					b.appendInt(x)
				}
			})(ec, vs, sel, n)
		})
		k.elem, k.convs, k.dictArg = t, convs, -1
		return k.bound(), nil
	}
}

// bindNetHost binds NET.HOST(url): the host of a URL, without scheme,
// user info, port, path, query or fragment; NULL when there is none.
func bindNetHost(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if _, err := match(name, args, 1, vec.String); err != nil {
		return nil, err
	}
	return newKernel(vec.String, rowEval(vec.String, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		h := urlHost(vs[0].StringAt(i))
		if h == "" {
			return errNull
		}
		out.Strs[i] = h
		return nil
	})).bound(), nil
}

// urlHost extracts the host part of a URL-like string.
func urlHost(u string) string {
	s := strings.TrimSpace(u)
	if k := strings.Index(s, "://"); k >= 0 {
		s = s[k+3:]
	} else {
		s = strings.TrimPrefix(s, "//")
	}
	if k := strings.IndexAny(s, "/?#"); k >= 0 {
		s = s[:k]
	}
	if k := strings.LastIndexByte(s, '@'); k >= 0 {
		s = s[k+1:]
	}
	if strings.HasPrefix(s, "[") {
		if k := strings.IndexByte(s, ']'); k >= 0 {
			return s[:k+1]
		}
		return s
	}
	if k := strings.LastIndexByte(s, ':'); k >= 0 {
		s = s[:k]
	}
	return s
}

func bindGenerateUUID(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if len(args) != 0 {
		return nil, arityError(name)
	}
	k := &kernel{typ: vec.String, volatile: true, dictArg: -1, eval: func(_ *EvalCtx, _ []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		out := newVec(vec.String, n)
		forRows(sel, n, func(i int) { out.Strs[i] = uuid.NewString() })
		return out, nil
	}}
	return k.bound(), nil
}
