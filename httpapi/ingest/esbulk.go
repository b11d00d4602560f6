package ingest

import (
	"github.com/sediment/sediment/event"
)

// Elasticsearch bulk (POST /_bulk, /<index>/_bulk), as Filebeat, Logstash,
// Fluent Bit and Elasticsearch clients send it: NDJSON lines, an action
// line ({"index":{...}}, {"create":{...}}, {"update":{...}} or
// {"delete":{...}}) followed, except for delete, by a source line.
//
// index and create documents become events; update and delete are
// answered per item with an error (a log store does not change events).
// A document becomes an event as Filebeat's and Logstash's documents
// expect: "@timestamp" (else "timestamp") is the timestamp, "message"
// (or "event_message", "log_entry") the message, the action's _id the id,
// and every other member goes into metadata.

// BulkItem is one action of a bulk request.
type BulkItem struct {
	// Action is "index", "create", "update" or "delete".
	Action string
	// Index is the action's _index, else the index of the URL.
	Index string
	// ID is the action's _id, "" when absent.
	ID string
	// Event is the raw event of an index or create action whose document
	// parsed; ErrType and Reason are set instead when the item fails.
	Event   event.Value
	ErrType string
	Reason  string
}

// Failed reports whether the item cannot be ingested.
func (it *BulkItem) Failed() bool { return it.ErrType != "" }

// bulkActions are the actions of the bulk API, and whether a source line
// follows them.
var bulkActions = map[string]bool{"index": true, "create": true, "update": true, "delete": false}

// DecodeBulk decodes a bulk request body; defaultIndex is the index named
// in the URL ("" for /_bulk). Errors fail the whole request as
// Elasticsearch does: 415 for a content type that is not JSON or NDJSON,
// 413 over the limit, 400 for an action line that does not parse, names
// no known action, or lacks its source line. A source line that does not
// parse fails only its item.
//
// The result aliases the request body and the Decoder's buffers until the
// next decode.
func (d *Decoder) DecodeBulk(req Request, defaultIndex string) ([]BulkItem, error) {
	d.parser.Reset()
	d.proto.reset()
	switch mediaType(req.ContentType) {
	case "", "application/json", "application/x-ndjson", "application/vnd.elasticsearch+json",
		"application/vnd.elasticsearch+x-ndjson", "text/plain":
	default:
		return nil, errorf(ErrUnsupportedContentType, "%q: the bulk API takes application/x-ndjson or application/json", req.ContentType)
	}
	body, err := d.decomp.decompress(req.Body, req.ContentEncoding, d.limit(), req.Charge)
	if err != nil {
		return nil, err
	}
	var items []BulkItem
	var pending *BulkItem // an action waiting for its source line
	event.EachLine(body, func(lineNo, offset int, line []byte) bool {
		if pending != nil {
			d.bulkDocument(pending, line, lineNo, offset)
			items = append(items, *pending)
			pending = nil
			return true
		}
		var it BulkItem
		if it, err = d.bulkAction(line, lineNo, offset, defaultIndex); err != nil {
			return false
		}
		if bulkActions[it.Action] {
			pending = &it
			return true
		}
		it.ErrType, it.Reason = "action_request_validation_exception", "Sediment stores events and does not delete them"
		items = append(items, it)
		return true
	})
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return nil, errorf(ErrBadShape, "the bulk request must end with a newline: the %s action has no source line", pending.Action)
	}
	return items, nil
}

// bulkAction parses an action line.
func (d *Decoder) bulkAction(line []byte, lineNo, offset int, defaultIndex string) (BulkItem, error) {
	v, err := d.parser.ParseLine(line, lineNo, offset)
	if err != nil {
		return BulkItem{}, wrap(ErrMalformed, err, "bulk action line %d", lineNo)
	}
	if v.Kind != event.Object || len(v.Kids) != 1 || v.Kids[0].Kind != event.Object {
		return BulkItem{}, errorf(ErrBadShape, "bulk line %d: an action must be an object with one member, e.g. {\"create\":{}}", lineNo)
	}
	act := v.Kids[0]
	if _, ok := bulkActions[act.Key]; !ok {
		return BulkItem{}, errorf(ErrBadShape, "bulk line %d: unknown action %q: expected one of [create, delete, index, update]", lineNo, truncate(act.Key, 64))
	}
	it := BulkItem{Action: act.Key, Index: defaultIndex}
	if s := act.Get("_index"); s != nil && s.Kind == event.String && s.Str != "" {
		it.Index = s.Str
	}
	if s := act.Get("_id"); s != nil {
		switch s.Kind {
		case event.String:
			it.ID = s.Str
		case event.Int, event.Float:
			it.ID = d.proto.text(func(b []byte) []byte { return event.AppendJSON(b, *s) })
		}
	}
	return it, nil
}

// bulkDocument parses the source line of it.
func (d *Decoder) bulkDocument(it *BulkItem, line []byte, lineNo, offset int) {
	if it.Action != "index" && it.Action != "create" {
		it.ErrType = "action_request_validation_exception"
		it.Reason = "Sediment stores events and does not update them"
		return
	}
	v, err := d.parser.ParseLine(line, lineNo, offset)
	if err != nil {
		it.ErrType, it.Reason = "document_parsing_exception", "failed to parse: "+err.Error()
		return
	}
	if v.Kind != event.Object {
		it.ErrType, it.Reason = "document_parsing_exception", "the document must be a JSON object"
		return
	}
	it.Event = d.bulkEvent(v, it.ID)
}

// bulkEvent maps a document to a raw event.
func (d *Decoder) bulkEvent(doc event.Value, id string) event.Value {
	ts := doc.Get("@timestamp")
	top := d.proto.vals.alloc(6)
	meta := d.proto.vals.alloc(len(doc.Kids))
	for _, m := range doc.Kids {
		switch m.Key {
		case "@timestamp":
			top = append(top, event.Member("timestamp", m))
		case "timestamp":
			if ts == nil {
				top = append(top, m)
			} else {
				meta = append(meta, m)
			}
		case "message", "event_message", "log_entry":
			top = append(top, m)
		default:
			meta = append(meta, m)
		}
	}
	if id != "" {
		top = append(top, event.Member("id", event.StringValue(id)))
	}
	top = append(top, event.Member("metadata", event.ObjectValue(meta...)))
	return event.ObjectValue(top...)
}
