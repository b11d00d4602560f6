package ingest

import (
	"bytes"
	"encoding/base64"
	"unsafe"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sediment/sediment/event"
)

// What an OTLP request takes in memory once decoded, computed before it is
// decoded, so that DecodeOTLPLogs can refuse it (past MaxDecodedBytes) or
// charge it to the caller's in-flight budget (Request.Charge) first:
//
//	retained   what the result holds until the caller is done with it: the
//	           events' members and elements (event.Value), the strings they
//	           alias, the texts made while converting (hex ids, timestamps,
//	           JSON of structured bodies);
//	transient  what protobuf messages hold while they are converted: for
//	           protobuf, one record with its resource and scope (the
//	           largest of each); for OTLP/JSON, the whole message protojson
//	           builds, bounded from the text (otlpJSONMessageBound).
//
// Every figure is an upper bound, with sizes of a 64-bit platform, counted
// from the request's own form: its protobuf wire form (otlpWireCost, which
// allocates nothing), or the messages protojson decoded (otlpTreeCost). The
// two count the same things the same way (otlpcost_test.go checks that
// they agree, and that the figures bound what decoding holds).

// otlpCost counts what decoding a request makes.
type otlpCost struct {
	resources, records int64
	// recordValues counts the records' own members (recordMembers): of
	// their events, of their metadata, and their places in
	// OTLPResource.Events. values counts the other event members and
	// elements (attributes, map entries, array elements, a scope's
	// members); dots the objects dotted attribute keys may add.
	recordValues, values, dots int64
	// strings and stringBytes count the strings protobuf decodes, which
	// the events alias.
	strings, stringBytes int64
	// text counts the bytes written to the Decoder's text buffer.
	text int64
	// The largest protobuf form of a record, of a resource, of a scope
	// (protobuf path only).
	record, resource, scope int64
}

// allocSize bounds what an allocation of n bytes takes (Go's size classes
// round up by at most an eighth, and 16 bytes for small sizes).
func allocSize(n uintptr) int64 { return int64(n + n/8 + 16) }

// Sizes of what decoding allocates.
var (
	sizeValue = int64(unsafe.Sizeof(event.Value{}))
	// costProtoKeyValue is one KeyValue while its list is converted: the
	// message, its pointer in the list's growing array, the conversion's
	// scratch entries (otlpConverter.attributes and nestDotted).
	costProtoKeyValue = allocSize(unsafe.Sizeof(commonpb.KeyValue{})) + 2*8 + sizeValue + int64(unsafe.Sizeof(dottedEntry{}))
	// costProtoAnyValue is one AnyValue: the message, the largest oneof
	// wrapper, and its pointer in a growing array.
	costProtoAnyValue = allocSize(unsafe.Sizeof(commonpb.AnyValue{})) + allocSize(unsafe.Sizeof(commonpb.AnyValue_BytesValue{})) + 2*8
	// costProtoList is an ArrayValue or a KeyValueList.
	costProtoList = allocSize(unsafe.Sizeof(commonpb.KeyValueList{}))
	// costProtoMessage is the largest message of the request (a log record).
	costProtoMessage = allocSize(unsafe.Sizeof(logspb.LogRecord{}))
	// costScopeValues is a scope's members.
	costScopeValues = int64(4)
)

const (
	// costRecordText is the text of a record's timestamp (ids are
	// counted with their lengths).
	costRecordText = 32
	// costJSONValue is the JSON text of one value of a structured body
	// besides its strings: a number's digits, quotes, separators, null.
	costJSONValue = 40
	// jsonEscape is how much longer JSON may make a string (\u00XX).
	jsonEscape = 6
	// otlpScanDepth stops otlpWireCost's recursion a little past
	// protobuf's own limit (which fails the decode, as it counts a few
	// levels more from LogsData).
	otlpScanDepth = protowire.DefaultRecursionLimit + 8
)

// retained is what the result of the decode holds.
func (c *otlpCost) retained() int64 {
	values := c.recordValues + c.values + c.dots
	return values*sizeValue*5/4 + // value chunks leave up to a quarter of a chunk unused
		c.strings*16 + c.stringBytes*9/8 +
		(c.text+c.records*costRecordText)*9/8 + textChunk +
		c.resources*int64(unsafe.Sizeof(OTLPResource{}))
}

// total is what the protobuf path holds at most: the result, and the
// messages of one record (with its resource and scope).
func (c *otlpCost) total() int64 { return c.retained() + c.record + c.resource + c.scope }

// str counts a decoded string of n bytes.
func (c *otlpCost) str(n int) {
	if n > 0 {
		c.strings++
		c.stringBytes += int64(n)
	}
}

// keyValue counts an attribute or map entry: a member of the events, and
// its place in a body's JSON text.
func (c *otlpCost) keyValue(mode bodyMode) {
	c.values++
	if mode == inBody {
		c.text += costJSONValue
	}
}

// key counts the key of an attribute or map entry.
func (c *otlpCost) key(dots, n int, mode bodyMode) {
	c.str(n)
	c.dots += int64(min(dots, maxKeySegments-1))
	if mode == inBody {
		c.text += jsonEscape * int64(n)
	}
}

// recordFields says which fields a record has, for its members.
type recordFields struct {
	time, severityNumber, severityText, eventName, traceID, spanID, flags, body, attributes, dropped bool
}

// members counts the members record gives the record's event and metadata
// (level included), and its place in OTLPResource.Events; resource and
// scope are counted whether or not they are there.
func (f recordFields) members() int64 {
	n := int64(4) // metadata, resource, scope, the place in Events
	for _, has := range [...]bool{f.time, f.severityNumber || f.severityText, f.severityNumber, f.severityText,
		f.eventName, f.traceID, f.spanID, f.flags, f.body, f.body, f.attributes, f.dropped} {
		if has {
			n++
		}
	}
	return n
}

// bodyMode says whether a value is a record's body, whose JSON text is
// kept when it is not a string, or inside one.
type bodyMode uint8

const (
	notBody bodyMode = iota
	bodyTop
	inBody
)

func (m bodyMode) inner() bodyMode {
	if m == notBody {
		return notBody
	}
	return inBody
}

// The protobuf wire form. A message field given twice is counted twice (a
// decode merges it): the figures stay bounds.

var errOTLPNesting = errorf(ErrMalformed, "OTLP logs request: values nest deeper than protobuf's recursion limit")

// otlpWireCost counts a protobuf LogsData. It fails (ErrMalformed) where
// the wire form does not parse.
func otlpWireCost(b []byte) (otlpCost, error) {
	var c otlpCost
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		return c.wireResourceLogs(val)
	})
	return c, err
}

func (c *otlpCost) wireResourceLogs(b []byte) error {
	c.resources++
	var resource int64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			p, err := c.wireResource(val)
			resource += p
			return err
		case 2:
			return c.wireScopeLogs(val)
		}
		return nil
	})
	c.resource = max(c.resource, resource)
	return err
}

func (c *otlpCost) wireResource(b []byte) (int64, error) {
	proto := costProtoMessage
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1: // attributes
			p, err := c.wireKeyValue(val, 3, notBody)
			proto += p
			return err
		case 3: // entity_refs: decoded, not converted; strings and string lists
			proto += costProtoMessage + 17*int64(len(val))
		}
		return nil
	})
	return proto, err
}

func (c *otlpCost) wireScopeLogs(b []byte) error {
	var scope int64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			p, err := c.wireScope(val)
			scope += p
			return err
		case 2:
			return c.wireRecord(val)
		}
		return nil
	})
	c.scope = max(c.scope, scope)
	return err
}

func (c *otlpCost) wireScope(b []byte) (int64, error) {
	c.values += costScopeValues
	proto := costProtoMessage
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1, 2: // name, version
			c.str(len(val))
		case 3: // attributes
			p, err := c.wireKeyValue(val, 4, notBody)
			proto += p
			return err
		}
		return nil
	})
	return proto, err
}

func (c *otlpCost) wireRecord(b []byte) error {
	c.records++
	var proto int64 // the record message itself is reused
	var has recordFields
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		switch num {
		case 1, 11:
			has.time = true
		case 2:
			has.severityNumber = true
		case 3:
			has.severityText = true
		case 5:
			has.body = true
		case 6:
			has.attributes = true
		case 7:
			has.dropped = true
		case 8:
			has.flags = true
		case 9:
			has.traceID = true
		case 10:
			has.spanID = true
		case 12:
			has.eventName = true
		}
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 3: // severity_text: kept, and lower-cased for the level
			c.str(len(val))
			c.str(len(val))
		case 12: // event_name
			c.str(len(val))
		case 5: // body
			p, err := c.wireAnyValue(val, 4, bodyTop)
			proto += p
			return err
		case 6: // attributes
			p, err := c.wireKeyValue(val, 4, notBody)
			proto += p
			return err
		case 9, 10: // trace_id, span_id, written in hex
			c.text += 2 * int64(len(val))
			proto += allocSize(uintptr(len(val)))
		}
		return nil
	})
	c.recordValues += has.members()
	c.record = max(c.record, proto)
	return err
}

func (c *otlpCost) wireKeyValue(b []byte, depth int, mode bodyMode) (int64, error) {
	if depth > otlpScanDepth {
		return 0, errOTLPNesting
	}
	c.keyValue(mode)
	proto := costProtoKeyValue
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			c.key(bytes.Count(val, []byte{'.'}), len(val), mode)
		case 2:
			p, err := c.wireAnyValue(val, depth+1, mode)
			proto += p
			return err
		}
		return nil
	})
	return proto, err
}

func (c *otlpCost) wireAnyValue(b []byte, depth int, mode bodyMode) (int64, error) {
	if depth > otlpScanDepth {
		return 0, errOTLPNesting
	}
	proto := costProtoAnyValue
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		switch num {
		case 1: // string
			if typ == protowire.BytesType {
				c.stringValue(len(val), mode)
			}
		case 2, 3, 4, 8: // bool, int, double, a dictionary index
			c.scalar(num == 4, mode)
		case 7: // bytes, written in base64
			if typ == protowire.BytesType {
				c.bytesValue(len(val), mode)
				proto += allocSize(uintptr(len(val)))
			}
		case 5: // array
			if typ != protowire.BytesType {
				return nil
			}
			c.list(mode)
			proto += costProtoList
			return eachField(val, func(num protowire.Number, typ protowire.Type, elem []byte, _ uint64) error {
				if num != 1 || typ != protowire.BytesType {
					return nil
				}
				c.element(mode)
				p, err := c.wireAnyValue(elem, depth+1, mode.inner())
				proto += p
				return err
			})
		case 6: // map
			if typ != protowire.BytesType {
				return nil
			}
			c.list(mode)
			proto += costProtoList
			return eachField(val, func(num protowire.Number, typ protowire.Type, kv []byte, _ uint64) error {
				if num != 1 || typ != protowire.BytesType {
					return nil
				}
				p, err := c.wireKeyValue(kv, depth+1, mode.inner())
				proto += p
				return err
			})
		}
		return nil
	})
	return proto, err
}

// stringValue counts a string value: decoded, and in a structured body's
// JSON text.
func (c *otlpCost) stringValue(n int, mode bodyMode) {
	c.str(n)
	if mode == inBody {
		c.text += jsonEscape * int64(n)
	}
}

// scalar counts a bool, number or index: text in a body's JSON, and the
// text NaN and the infinities become.
func (c *otlpCost) scalar(double bool, mode bodyMode) {
	if mode == bodyTop {
		c.text += costJSONValue
	}
	if double {
		c.str(4)
	}
}

// bytesValue counts a bytes value: its base64 text, twice in a body.
func (c *otlpCost) bytesValue(n int, mode bodyMode) {
	t := int64(base64.StdEncoding.EncodedLen(n))
	c.text += t
	if mode == inBody {
		c.text += t
	}
}

// list counts an array or a map: brackets of a body's JSON text.
func (c *otlpCost) list(mode bodyMode) {
	if mode == bodyTop {
		c.text += costJSONValue
	}
}

// element counts an array element: a member of the events, and its place
// in a body's JSON text (a map entry's is counted with its key).
func (c *otlpCost) element(mode bodyMode) {
	c.values++
	if mode != notBody {
		c.text += costJSONValue
	}
}

// The decoded messages (OTLP/JSON), counted as the wire form is.

// otlpTreeCost counts what converting data's records retains.
func otlpTreeCost(data *logspb.LogsData) otlpCost {
	var c otlpCost
	for _, rl := range data.ResourceLogs {
		c.resources++
		if r := rl.GetResource(); r != nil {
			for _, kv := range r.Attributes {
				c.treeKeyValue(kv, notBody)
			}
		}
		for _, sl := range rl.GetScopeLogs() {
			if s := sl.GetScope(); s != nil {
				c.values += costScopeValues
				c.str(len(s.Name))
				c.str(len(s.Version))
				for _, kv := range s.Attributes {
					c.treeKeyValue(kv, notBody)
				}
			}
			for _, r := range sl.GetLogRecords() {
				c.treeRecord(r)
			}
		}
	}
	return c
}

func (c *otlpCost) treeRecord(r *logspb.LogRecord) {
	c.records++
	c.recordValues += recordFields{
		time: r.TimeUnixNano != 0 || r.ObservedTimeUnixNano != 0, severityNumber: r.SeverityNumber != 0,
		severityText: r.SeverityText != "", eventName: r.EventName != "", traceID: len(r.TraceId) > 0,
		spanID: len(r.SpanId) > 0, flags: r.Flags != 0, body: r.Body != nil, attributes: len(r.Attributes) > 0,
		dropped: r.DroppedAttributesCount > 0,
	}.members()
	c.str(len(r.SeverityText))
	c.str(len(r.SeverityText))
	c.str(len(r.EventName))
	if r.Body != nil {
		c.treeAnyValue(r.Body, bodyTop)
	}
	for _, kv := range r.Attributes {
		c.treeKeyValue(kv, notBody)
	}
	c.text += 2 * int64(len(r.TraceId)+len(r.SpanId))
}

func (c *otlpCost) treeKeyValue(kv *commonpb.KeyValue, mode bodyMode) {
	c.keyValue(mode)
	c.key(countDots(kv.GetKey()), len(kv.GetKey()), mode)
	if v := kv.GetValue(); v != nil {
		c.treeAnyValue(v, mode)
	}
}

func (c *otlpCost) treeAnyValue(v *commonpb.AnyValue, mode bodyMode) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		c.stringValue(len(x.StringValue), mode)
	case *commonpb.AnyValue_BoolValue, *commonpb.AnyValue_IntValue, *commonpb.AnyValue_StringValueStrindex:
		c.scalar(false, mode)
	case *commonpb.AnyValue_DoubleValue:
		c.scalar(true, mode)
	case *commonpb.AnyValue_BytesValue:
		c.bytesValue(len(x.BytesValue), mode)
	case *commonpb.AnyValue_ArrayValue:
		c.list(mode)
		for _, e := range x.ArrayValue.GetValues() {
			c.element(mode)
			c.treeAnyValue(e, mode.inner())
		}
	case *commonpb.AnyValue_KvlistValue:
		c.list(mode)
		for _, kv := range x.KvlistValue.GetValues() {
			c.treeKeyValue(kv, mode.inner())
		}
	}
}

func countDots(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			n++
		}
	}
	return n
}

// otlpJSONMessageBound bounds what protojson builds from an OTLP/JSON
// body: every message opens a brace, and takes at most the largest
// message's size, a oneof wrapper and its pointer in a growing array;
// every string opens a quote (a string is at most an allocation as long as
// its text).
func otlpJSONMessageBound(body []byte) int64 {
	braces := int64(bytes.Count(body, []byte{'{'}))
	quotes := int64(bytes.Count(body, []byte{'"'}))
	return braces*(costProtoMessage+costProtoAnyValue) + quotes*8 + int64(len(body))*9/8
}
