package fn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// evalCast evaluates CAST(from AS to) in a shape, like evalShape.
func evalCast(from any, to vec.Type, safe bool, sh shape) (any, error) {
	t := typeOfValue(from)
	d := datumOf(from)
	n := 1
	info := Arg{Type: t}
	var v *vec.Vector
	switch x := from.(type) {
	case arrV:
		info.Elem = x.elem
		v = buildVector(vec.List, []any{x}, false)
		if sh != shapeConst {
			n = 3
			v = buildVector(vec.List, []any{x, x, x}, false)
		}
	default:
		if sh == shapeConst || t == vec.Unknown {
			info.Const = &d
			if sh != shapeConst {
				n = 3
			}
			v = datumVector(d, n)
		} else {
			n = 3
			v = buildVector(t, []any{from, from, from}, sh == shapeDict)
			if sh == shapeBytes {
				v = toBytes(v)
			}
		}
	}
	b, err := BindCast(info, to, safe, BindInfo{})
	if err != nil {
		return nil, err
	}
	var sel []int32
	if n == 3 {
		sel = []int32{0, 2}
	}
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{v}, sel, n)
	if err != nil {
		return nil, err
	}
	if r.Type != to {
		return nil, fmt.Errorf("result type %s", r.Type)
	}
	return readValue(r, 0), nil
}

type castCase struct {
	from any
	to   vec.Type
	want any
	safe bool
}

func TestCast(t *testing.T) {
	S, I, F, B := vec.String, vec.Int64, vec.Float64, vec.Bool
	TS, DT, D, J := vec.Timestamp, vec.Datetime, vec.Date, vec.JSON
	cases := []castCase{
		{1, F, 1.0, false},
		{2.5, I, 3, false},
		{-2.5, I, -3, false},
		{1.4999, I, 1, false},
		{1e20, I, errWant("int64 out of range"), false},
		{math.NaN(), I, errWant("non-finite"), false},
		{1e20, I, nil, true},
		{"123", I, 123, false},
		{" 12 ", I, 12, false},
		{"+5", I, 5, false},
		{"-7", I, -7, false},
		{"0x1F", I, 31, false},
		{"-0x10", I, -16, false},
		{"abc", I, errWant("Bad int64 value: abc"), false},
		{"1.5", I, errWant("Bad int64 value: 1.5"), false},
		{"", I, errWant("Bad int64 value"), false},
		{"9223372036854775808", I, errWant("Bad int64 value"), false},
		{"abc", I, nil, true},
		{"1.5", F, 1.5, false},
		{"inf", F, math.Inf(1), false},
		{"-inf", F, math.Inf(-1), false},
		{"NaN", F, math.NaN(), false},
		{"1e3", F, 1000.0, false},
		{" 2 ", F, 2.0, false},
		{"x", F, errWant("Bad double value: x"), false},
		{"TRUE", B, true, false},
		{"false", B, false, false},
		{"yes", B, errWant("Bad bool value: yes"), false},
		{0, B, false, false},
		{5, B, true, false},
		{true, I, 1, false},
		{-5, S, "-5", false},
		{1.0, S, "1", false},
		{0.1, S, "0.1", false},
		{1e20, S, "1e+20", false},
		{123456789.123, S, "123456789.123", false},
		{1.0 / 3, S, "0.33333333333333331", false},
		{math.Inf(1), S, "inf", false},
		{math.NaN(), S, "nan", false},
		{math.Copysign(0, -1), S, "-0", false},
		{true, S, "true", false},
		{ts("2024-01-01 00:00:00"), S, "2024-01-01 00:00:00+00", false},
		{ts("2024-01-01 00:00:00.123"), S, "2024-01-01 00:00:00.123+00", false},
		{ts("2024-01-01 00:00:00.12"), S, "2024-01-01 00:00:00.120+00", false},
		{ts("2024-01-01 00:00:00.1234"), S, "2024-01-01 00:00:00.123400+00", false},
		{ts("0001-01-01 00:00:00.000001"), S, "0001-01-01 00:00:00.000001+00", false},
		{ts("1969-12-31 23:59:59.5"), S, "1969-12-31 23:59:59.500+00", false},
		{dt("2024-01-01 12:00:00"), S, "2024-01-01 12:00:00", false},
		{date("2024-01-01"), S, "2024-01-01", false},
		{"2024-01-01 00:00:00+00", TS, ts("2024-01-01"), false},
		{"2024-01-01T00:00:00Z", TS, ts("2024-01-01"), false},
		{"2024-01-01t00:00:00z", TS, ts("2024-01-01"), false},
		{"2024-01-01T00:00:00.123456+02:00", TS, ts("2023-12-31 22:00:00.123456"), false},
		{"2024-01-01T00:00:00+0530", TS, ts("2023-12-31 18:30:00"), false},
		{"2024-01-01 12:00:00", TS, ts("2024-01-01 12:00:00+00"), false},
		{"2024-01-01", TS, ts("2024-01-01 00:00:00+00"), false},
		{"2024-1-2 3:04:05", TS, ts("2024-01-02 03:04:05"), false},
		{"2024-01-01 00:00:00 America/Los_Angeles", TS, ts("2024-01-01 08:00:00"), false},
		{"2024-07-01 00:00:00 America/Los_Angeles", TS, ts("2024-07-01 07:00:00"), false},
		{"2024-01-01 00:00:00 UTC", TS, ts("2024-01-01"), false},
		{"2024-01-01 00:00:00.123456789Z", TS, ts("2024-01-01 00:00:00.123456"), false},
		{"2024-01-01 00:00", TS, ts("2024-01-01"), false},
		{" 2024-01-01 ", TS, ts("2024-01-01"), false},
		{"2024-13-01", TS, errWant("Invalid timestamp: '2024-13-01'"), false},
		{"2024-02-30", TS, errWant("Invalid timestamp"), false},
		{"abc", TS, errWant("Invalid timestamp"), false},
		{"2024-01-01 25:00:00", TS, errWant("Invalid timestamp"), false},
		{"2024-01-01 00:00:00 Mars/Olympus", TS, errWant("Invalid timestamp"), false},
		{"2024-01-01 00:00:00+15", TS, errWant("Invalid timestamp"), false},
		{"abc", TS, nil, true},
		{"2024-01-01", D, date("2024-01-01"), false},
		{"2024-1-1", D, date("2024-01-01"), false},
		{"2024-01-01 10:00:00", D, errWant("Invalid date"), false},
		{"2024-01-01 12:34:56.789", DT, dt("2024-01-01 12:34:56.789"), false},
		{"2024-01-01T12:34:56", DT, dt("2024-01-01 12:34:56"), false},
		{"2024-01-01", DT, dt("2024-01-01 00:00:00"), false},
		{"2024-01-01 00:00:00Z", DT, errWant("Invalid datetime"), false},
		{ts("2024-01-01 23:00:00"), D, date("2024-01-01"), false},
		{ts("1969-12-31 23:00:00"), D, date("1969-12-31"), false},
		{ts("2024-01-01 23:00:00"), DT, dt("2024-01-01 23:00:00"), false},
		{dt("2024-01-01 23:00:00"), TS, ts("2024-01-01 23:00:00"), false},
		{date("2024-01-01"), TS, ts("2024-01-01"), false},
		{date("2024-01-01"), DT, dt("2024-01-01 00:00:00"), false},
		{dt("2024-01-01 23:00:00"), D, date("2024-01-01"), false},
		{`{"a": 1}`, J, jsonV(`{"a":1}`), false},
		{`{`, J, errWant("Invalid JSON"), false},
		{jsonV(`{"a":1}`), S, `{"a":1}`, false},
		{jsonV(`12`), I, 12, false},
		{jsonV(`"12"`), I, 12, false},
		{jsonV(`true`), B, true, false},
		{refV(1), S, testRecords[1], false},
		{refV(2), J, jsonV(testRecords[2]), false},
		{arr(vec.Int64, 1, 2), S, "[1,2]", false},
		{nil, TS, nil, false},
		{nullOf(vec.String), I, nil, false},
		{1, TS, errWant("Invalid cast from INT64 to TIMESTAMP"), false},
		{date("2024-01-01"), I, errWant("Invalid cast from DATE to INT64"), false},
	}
	for _, tc := range cases {
		for _, sh := range []shape{shapeConst, shapeColumn, shapeDict, shapeBytes} {
			got, err := evalCast(tc.from, tc.to, tc.safe, sh)
			label := fmt.Sprintf("CAST(%#v AS %s) [%s]", tc.from, tc.to, sh)
			if tc.safe {
				label = "SAFE_" + label
			}
			if ew, ok := tc.want.(errWant); ok {
				if err == nil || !strings.Contains(err.Error(), string(ew)) {
					t.Errorf("%s = %#v, %v; want error containing %q", label, got, err, string(ew))
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", label, err)
				continue
			}
			if !sameTestValue(got, normWant(tc.want)) {
				t.Errorf("%s = %#v, want %#v", label, got, normWant(tc.want))
			}
		}
	}
}

func TestCastToSameTypeIsIdentity(t *testing.T) {
	b, err := BindCast(Arg{Type: vec.String}, vec.String, false, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	v := buildVector(vec.String, []any{"a", "b"}, true)
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{v}, nil, 2)
	if err != nil || r != v {
		t.Errorf("CAST to the same type copied or failed: %v", err)
	}
}

func TestCastBadLiteralAtBind(t *testing.T) {
	lit := Datum{Type: vec.String, Str: "abc"}
	if _, err := BindCast(Arg{Type: vec.String, Const: &lit}, vec.Int64, false, BindInfo{}); err == nil {
		t.Error("bad literal accepted at bind")
	}
	b, err := BindCast(Arg{Type: vec.String, Const: &lit}, vec.Int64, true, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{datumVector(lit, 4)}, nil, 4)
	if err != nil || !r.Const || !r.IsNull(3) || r.Len != 4 {
		t.Errorf("SAFE_CAST of a bad literal: %+v, %v", r, err)
	}
}

func TestParseTimestampExported(t *testing.T) {
	x, err := ParseTimestamp("2025-07-10T11:00:00.000Z")
	if err != nil || x != 1752145200000000 {
		t.Errorf("ParseTimestamp = %d, %v", x, err)
	}
	if s := FormatTimestamp(x + 5); s != "2025-07-10 11:00:00.000005+00" {
		t.Errorf("FormatTimestamp = %q", s)
	}
	if _, err := ParseTimestamp("9999-12-31 23:59:59.999999"); err != nil {
		t.Error(err)
	}
	if _, err := ParseTimestamp("9999-12-31 23:59:59-01:00"); err == nil {
		t.Error("timestamp past year 9999 accepted")
	}
}
