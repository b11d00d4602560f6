package ingest

import (
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sediment/sediment/event"
)

// OTLP protobuf, one log record at a time. proto.Unmarshal of a whole
// LogsData builds every record's messages before the first is converted:
// about twenty times the body in memory, all of it live at once. Here the
// three framing messages, whose fields are only other messages,
//
//	LogsData      { repeated ResourceLogs resource_logs = 1; }
//	ResourceLogs  { Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3; }
//	ScopeLogs     { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; string schema_url = 3; }
//
// are walked by hand, and each Resource, InstrumentationScope and LogRecord
// is decoded with proto.Unmarshal into its official generated type; the
// LogRecord into one message reused for every record, converted before the
// next is decoded. The outcome is the one of decoding the whole message:
// fields in any order, a message field given twice merged, a field of an
// unexpected wire type skipped as unknown, schema_url checked as UTF-8,
// the recursion limit counted from LogsData (otlpwire_test.go compares the
// two on fuzzed input).

// Unmarshal options of the messages decoded here. Merge, because protobuf
// merges a message field that occurs more than once (and the record is
// emptied by hand before each decode, keeping its attributes' array);
// DiscardUnknown, because unknown fields would be copied for nothing; the
// recursion limit of a whole-LogsData decode, less the framing messages
// above (2 above a Resource, 3 above a scope or a record).
var (
	otlpResourceOptions = proto.UnmarshalOptions{Merge: true, DiscardUnknown: true, RecursionLimit: protowire.DefaultRecursionLimit - 2}
	otlpScopeOptions    = proto.UnmarshalOptions{Merge: true, DiscardUnknown: true, RecursionLimit: protowire.DefaultRecursionLimit - 3}
	otlpRecordOptions   = otlpScopeOptions
)

// otlpProtobuf decodes a protobuf LogsData: its cost first (otlpcost.go),
// then its records.
func (d *Decoder) otlpProtobuf(body []byte, charge func(int64) bool) (OTLPLogs, error) {
	cost, err := otlpWireCost(body)
	if err != nil {
		return OTLPLogs{}, err
	}
	if err := d.chargeDecoded(0, cost.total(), charge); err != nil {
		return OTLPLogs{}, err
	}
	c := otlpConverter{d: d}
	out := OTLPLogs{Resources: make([]OTLPResource, 0, cost.resources)}
	err = eachField(body, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		res, err := c.wireResourceLogs(val, &out)
		out.Resources = append(out.Resources, res)
		return err
	})
	d.proto.resetRecord()
	if err != nil {
		return OTLPLogs{}, err
	}
	return out, nil
}

// wireResourceLogs decodes one ResourceLogs.
func (c *otlpConverter) wireResourceLogs(b []byte, out *OTLPLogs) (OTLPResource, error) {
	// The resource and the records' count first: fields come in any order.
	var resource *resourcepb.Resource
	records := 0
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			if resource == nil {
				resource = new(resourcepb.Resource)
			}
			if err := otlpResourceOptions.Unmarshal(val, resource); err != nil {
				return wrap(ErrMalformed, err, "OTLP resource")
			}
		case 2:
			records += countRecords(val)
		case 3:
			return checkUTF8(val, "resource_logs.schema_url")
		}
		return nil
	})
	if err != nil {
		return OTLPResource{}, err
	}
	var res OTLPResource
	service, resAttrs, keep := c.resource(resource)
	res.ServiceName = service
	if keep {
		res.Events = make([]event.Value, 0, records)
	} else {
		out.reject(records, reasonDeepResource)
	}
	err = eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if num != 2 || typ != protowire.BytesType {
			return nil
		}
		return c.wireScopeLogs(val, resAttrs, keep, &res, out)
	})
	return res, err
}

// wireScopeLogs decodes one ScopeLogs into res. Its records are decoded
// even when keep is false (the resource is rejected), so that a body is
// refused or accepted as a whole-message decode would.
func (c *otlpConverter) wireScopeLogs(b []byte, resAttrs event.Value, keep bool, res *OTLPResource, out *OTLPLogs) error {
	var scopeMsg *commonpb.InstrumentationScope
	records := 0
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			if scopeMsg == nil {
				scopeMsg = new(commonpb.InstrumentationScope)
			}
			if err := otlpScopeOptions.Unmarshal(val, scopeMsg); err != nil {
				return wrap(ErrMalformed, err, "OTLP scope")
			}
		case 2:
			records++
		case 3:
			return checkUTF8(val, "scope_logs.schema_url")
		}
		return nil
	})
	if err != nil {
		return err
	}
	var scope event.Value
	if keep {
		var ok bool
		if scope, ok = c.scope(scopeMsg); !ok {
			out.reject(records, reasonDeepScope)
			keep = false
		}
	}
	rec := c.d.proto.logRecord()
	return eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if num != 2 || typ != protowire.BytesType {
			return nil
		}
		c.d.proto.resetRecord()
		if err := otlpRecordOptions.Unmarshal(val, rec); err != nil {
			return wrap(ErrMalformed, err, "OTLP log record")
		}
		if !keep {
			return nil
		}
		ev, ok := c.record(rec, resAttrs, scope)
		if !ok {
			out.reject(1, reasonDeepRecord)
			return nil
		}
		res.Events = append(res.Events, ev)
		return nil
	})
}

// logRecord returns the reused log record.
func (p *protocolState) logRecord() *logspb.LogRecord {
	if p.record == nil {
		p.record = new(logspb.LogRecord)
	}
	return p.record
}

// resetRecord empties the reused log record, keeping its attributes'
// array (cleared: nothing it held stays alive) for the next record to
// fill, since proto's merge appends to a repeated field.
func (p *protocolState) resetRecord() {
	if p.record == nil {
		return
	}
	attrs := p.record.Attributes
	clear(attrs)
	*p.record = logspb.LogRecord{Attributes: attrs[:0]}
}

// countRecords counts the log_records of a ScopeLogs (its framing was
// checked by otlpWireCost).
func countRecords(b []byte) int {
	n := 0
	_ = eachField(b, func(num protowire.Number, typ protowire.Type, _ []byte, _ uint64) error {
		if num == 2 && typ == protowire.BytesType {
			n++
		}
		return nil
	})
	return n
}

// checkUTF8 fails for a string field that is not UTF-8, as proto.Unmarshal
// does for proto3 strings.
func checkUTF8(b []byte, field string) error {
	if !utf8.Valid(b) {
		return errorf(ErrMalformed, "OTLP logs request: %s is not valid UTF-8", field)
	}
	return nil
}
