package fn

import (
	"math"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestJSONExtraction(t *testing.T) {
	const doc = `{"class": {"students": [{"name": "Jane"}, {"name": "John"}]}, "n": null, "t": true, "x": 1.50}`
	runCases(t, []fnCase{
		c("json_value", "6", `{"name": "Jakob", "age": "6"}`, "$.age"),
		c("json_value", "Jane", doc, "$.class.students[0].name"),
		c("json_value", "John", doc, "$.class.students[1].name"),
		c("json_value", nil, doc, "$.class.students[2].name"),
		c("json_value", nil, doc, "$.class"),
		c("json_value", nil, doc, "$.n"),
		c("json_value", "true", doc, "$.t"),
		c("json_value", "1.50", doc, "$.x"),
		c("json_value", nil, doc, "$.missing"),
		c("json_value", "x", `"x"`),
		c("json_value", "1", `{"a.b": 1}`, `$."a.b"`),
		c("json_value", "1", `{"a.b": 1}`, `$['a.b']`),
		c("json_value", "é\n\"", `{"a":"\u00e9\n\""}`, "$.a"),
		c("json_value", "😀", `{"a":"\ud83d\ude00"}`, "$.a"),
		c("json_value", "v", `{"k\"ey":"v"}`, `$."k\"ey"`),
		c("json_value", nil, "not json", "$.a"),
		// Scanning is lazy: text after the value found is not validated.
		c("json_value", "2", `{"a": [1, 2`, "$.a[1]"),
		c("json_value", nil, `{"a": [1, 2`, "$.a[2]"),
		c("json_value", "2", ` { "a" : [ 1 , 2 ] } `, "$.a[1]"),
		c("json_value", "1", jsonV(`{"a":1}`), "$.a"),
		c("json_value", "200", refV(1), "$.metadata[0].status"),
		c("json_value", errWant("must start with '$'"), `{}`, "a"),
		c("json_value", errWant("empty member name"), `{}`, "$..a"),
		c("json_value", errWant("expected ']'"), `{}`, "$[0"),
		c("json_value", nil, nullOf(vec.String), "$"),
		c("json_extract_scalar", "x", `{"a": ["x"]}`, "$['a'][0]"),
		c("json_query", `{"students":[{"name":"Jane"},{"name":"John"}]}`, doc, "$.class"),
		c("json_query", `"Jane"`, doc, "$.class.students[0].name"),
		c("json_query", nil, doc, "$.n"),
		c("json_query", jsonV("null"), jsonV(doc), "$.n"),
		c("json_query", jsonV(`{"name":"Jane"}`), jsonV(doc), "$.class.students[0]"),
		c("json_query", nil, doc, "$.nope"),
		c("json_extract", `[{"name":"Jane"},{"name":"John"}]`, doc, "$.class.students"),
		c("json_extract", jsonV(`[{"status":200,"path":"/x"}]`), refV(1), "$.metadata"),
		c("json_value_array", []any{"1", "b", nil, "true"}, `{"a":[1,"b",null,true]}`, "$.a"),
		c("json_value_array", nil, `{"a":[1,{"b":2}]}`, "$.a"),
		c("json_value_array", nil, `{"a":1}`, "$.a"),
		c("json_value_array", []any{}, `[]`),
		c("json_extract_string_array", []any{"x", "y"}, `["x","y"]`),
		c("json_query_array", []any{"1", `{"a":2}`, `"x"`}, `[1, {"a": 2}, "x"]`),
		c("json_query_array", []any{jsonV("1"), jsonV("[2]")}, jsonV(`[1,[2]]`)),
		c("json_extract_array", []any{"1", "2"}, `{"a":[1,2]}`, "$.a"),
		c("json_type", "array", jsonV("[1]")),
		c("json_type", "object", jsonV(` {}`)),
		c("json_type", "number", jsonV("1.5")),
		c("parse_json", jsonV(`{"a":1,"b":[true,null]}`), `{"a": 1, "b": [true, null]}`),
		c("parse_json", jsonV(`"x y"`), ` "x y" `),
		c("parse_json", errWant("invalid JSON input"), `{`),
		c("parse_json", errWant("invalid JSON input"), `{"a":1} x`),
		c("parse_json", errWant("invalid JSON input"), `[01]`),
		safeC("parse_json", nil, `{`),
		c("string", "x\n", jsonV(`"x\n"`)),
		c("string", errWant("not a string"), jsonV(`1`)),
		c("string", nil, jsonV(`null`)),
		c("int64", 10, jsonV(`10`)),
		c("int64", 10, jsonV(`1.0e1`)),
		c("int64", errWant("not an INT64"), jsonV(`1.5`)),
		c("int64", errWant("not a number"), jsonV(`"1"`)),
		c("float64", 1.5, jsonV(`1.5`)),
		c("bool", true, jsonV(`true`)),
		c("bool", errWant("not a boolean"), jsonV(`"true"`)),
	})
}

func TestToJSONString(t *testing.T) {
	runCases(t, []fnCase{
		c("to_json_string", "1", 1),
		c("to_json_string", "1.5", 1.5),
		c("to_json_string", `"NaN"`, math.NaN()),
		c("to_json_string", `"-Infinity"`, math.Inf(-1)),
		c("to_json_string", `"a\"b\\c\n\u0001"`, "a\"b\\c\n\x01"),
		c("to_json_string", `"é"`, "é"),
		c("to_json_string", "null", nil),
		c("to_json_string", "null", nullOf(vec.Int64)),
		c("to_json_string", "true", true),
		c("to_json_string", `"2024-01-01T00:00:00Z"`, ts("2024-01-01")),
		c("to_json_string", `"2024-01-01T00:00:00.123Z"`, ts("2024-01-01 00:00:00.123")),
		c("to_json_string", `"2024-01-01T12:00:00.000001"`, dt("2024-01-01 12:00:00.000001")),
		c("to_json_string", `"2024-01-01"`, date("2024-01-01")),
		c("to_json_string", `{"a":1}`, jsonV(`{ "a" : 1 }`)),
		c("to_json_string", "[1,2,null]", arr(vec.Int64, 1, 2, nil)),
		c("to_json_string", `["a","b"]`, arr(vec.String, "a", "b")),
		c("to_json_string", "[]", arr(vec.Int64)),
		c("to_json_string", testRecords[1], refV(1)),
		c("to_json_string", `[`+testRecords[1]+`,`+testRecords[2]+`]`, arr(vec.RowRef, refV(1), refV(2))),
		c("to_json_string", "[\n  1,\n  2\n]", arr(vec.Int64, 1, 2), keep{true}),
		c("to_json_string", "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}", jsonV(`{"a":[1],"b":{}}`), keep{true}),
		c("to_json_string", "1", 1, keep{false}),
		c("to_json", jsonV("1"), 1),
		c("to_json", jsonV(`"x"`), "x"),
	})
}

func TestJSONPathParse(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []jsonStep
		bad  bool
	}{
		{path: "$", want: nil},
		{path: "$.a.b", want: []jsonStep{{key: "a"}, {key: "b"}}},
		{path: "$.a[10]", want: []jsonStep{{key: "a"}, {index: 10, isIndex: true}}},
		{path: `$."a.b"`, want: []jsonStep{{key: "a.b"}}},
		{path: "$['a b']", want: []jsonStep{{key: "a b"}}},
		{path: `$["x"][ 2 ]`, want: []jsonStep{{key: "x"}, {index: 2, isIndex: true}}},
		{path: "a", bad: true},
		{path: "$.", bad: true},
		{path: "$[a]", bad: true},
		{path: "$[-1]", bad: true},
		{path: `$."a`, bad: true},
		{path: "$x", bad: true},
		{path: "", bad: true},
	} {
		got, err := parseJSONPath("T", tc.path)
		if tc.bad {
			if err == nil {
				t.Errorf("parseJSONPath(%q) = %v, want an error", tc.path, got)
			}
			continue
		}
		if err != nil || !sameTestValue(got, tc.want) {
			t.Errorf("parseJSONPath(%q) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
}

func TestValidateAndCompactJSON(t *testing.T) {
	for _, s := range []string{`{}`, `[]`, `1`, `-0.5e+3`, `"a\u0041"`, `{"a":[1,{"b":null}]}`, " true "} {
		if err := validateJSON(s); err != nil {
			t.Errorf("validateJSON(%q): %v", s, err)
		}
	}
	for _, s := range []string{``, `{`, `[1,]`, `{"a"}`, `01`, `1.`, `"\x"`, `nul`, "\"a\nb\"", `{"a":1,}`} {
		if err := validateJSON(s); err == nil {
			t.Errorf("validateJSON(%q): no error", s)
		}
	}
	deep := ""
	for i := 0; i < maxJSONDepth+5; i++ {
		deep += "["
	}
	if err := validateJSON(deep); err == nil {
		t.Error("deep nesting accepted")
	}
	if got := compactJSON(`{ "a b" : [ 1 , "x y" ] }`); got != `{"a b":[1,"x y"]}` {
		t.Errorf("compactJSON = %q", got)
	}
}
