package ingest

import (
	"strings"
	"unsafe"

	"github.com/sediment/sediment/event"
)

// addRaw is Logflare's Raw processor (the create action):
//   - {"batch":[...]} → each element (which must be an object);
//   - a top-level array → each element (objects);
//   - any other object → one event without its "timestamp" and "id" (so it
//     gets a server timestamp and a new id). On /cloudflare "source" goes too;
//     elsewhere "source"/"source_name" stay as event fields, as in Logflare.
//
// A "batch" member that is not an array makes the body a single object, as
// Logflare's pattern match does. Non-object elements are ErrBadShape (400)
// rather than skipped, so a client learns its batch was wrong.
func (d *Decoder) addRaw(v event.Value, route Route) error {
	switch v.Kind {
	case event.Array:
		return d.addBatch(v.Kids)
	case event.Object:
		if b := v.Get("batch"); b != nil && b.Kind == event.Array {
			return d.addBatch(b.Kids)
		}
		drop := [...]string{"timestamp", "id", ""}
		if route == RouteCloudflare {
			drop[2] = "source"
		}
		d.events = append(d.events, withoutKeys(v, drop[:]...))
		return nil
	}
	return errorf(ErrBadShape, "body must be a JSON object or array, not %v", v.Kind)
}

func (d *Decoder) addBatch(elems []event.Value) error {
	for i := range elems {
		if elems[i].Kind != event.Object {
			return errorf(ErrBadShape, "batch element %d is %v, not an object", i, elems[i].Kind)
		}
	}
	d.events = append(d.events, elems...)
	return nil
}

// withoutKeys returns v without the named members. v's member slice is not
// modified; a new one is made only when something is removed.
func withoutKeys(v event.Value, keys ...string) event.Value {
	has := func(k string) bool {
		for _, x := range keys {
			if x != "" && x == k {
				return true
			}
		}
		return false
	}
	n := 0
	for i := range v.Kids {
		if has(v.Kids[i].Key) {
			n++
		}
	}
	if n == 0 {
		return v
	}
	kids := make([]event.Value, 0, len(v.Kids)-n)
	for i := range v.Kids {
		if !has(v.Kids[i].Key) {
			kids = append(kids, v.Kids[i])
		}
	}
	v.Kids = kids
	return v
}

// addGeneric is the /json processor: {"message": <the object as compact
// JSON>, "metadata": <the object>}. The object's own timestamp is not used.
func (d *Decoder) addGeneric(obj event.Value) error {
	obj.Key = ""
	d.events = append(d.events, event.ObjectValue(
		event.Member("message", event.StringValue(d.jsonText(obj))),
		event.Member("metadata", obj),
	))
	return nil
}

// jsonText returns the compact JSON of v as a new string.
func (d *Decoder) jsonText(v event.Value) string {
	d.scratch = event.AppendJSON(d.scratch[:0], v)
	return string(d.scratch)
}

// addVector is the /vector processor: {"message", "metadata": every member
// but message and timestamp, "project" (when present, also kept in
// metadata), "timestamp"}. Without a message the message is the JSON of the
// metadata. Logflare's processor only matches events with a timestamp; an
// event without one is ErrBadShape (400).
func (d *Decoder) addVector(obj event.Value) error {
	ts := obj.Get("timestamp")
	if ts == nil {
		return errorf(ErrBadShape, `vector event without "timestamp"`)
	}
	meta := withoutKeys(obj, "message", "timestamp")
	meta.Key = ""
	var msg event.Value
	if m := obj.Get("message"); m != nil {
		msg = *m
	} else {
		msg = event.StringValue(d.jsonText(meta))
	}
	members := make([]event.Value, 0, 4)
	members = append(members, event.Member("message", msg), event.Member("metadata", meta))
	if p := obj.Get("project"); p != nil {
		members = append(members, *p)
	}
	members = append(members, *ts)
	d.events = append(d.events, event.ObjectValue(members...))
	return nil
}

// addGithub is the /github processor: message "<repository.full_name> |
// <sender.login> | <action>" (missing parts empty), metadata the payload
// without any member whose key ends in "_url", at any depth.
func (d *Decoder) addGithub(payload event.Value) error {
	var b strings.Builder
	b.WriteString(d.textAt(&payload, "repository", "full_name"))
	b.WriteString(" | ")
	b.WriteString(d.textAt(&payload, "sender", "login"))
	b.WriteString(" | ")
	b.WriteString(d.textAt(&payload, "action"))
	meta := withoutURLKeys(payload)
	meta.Key = ""
	d.events = append(d.events, event.ObjectValue(
		event.Member("message", event.StringValue(b.String())),
		event.Member("metadata", meta),
	))
	return nil
}

// textAt renders the value at path: a string as is, null or missing as "",
// anything else as JSON.
func (d *Decoder) textAt(v *event.Value, path ...string) string {
	x := v.Path(path...)
	if x == nil || x.Kind == event.Null {
		return ""
	}
	if x.Kind == event.String {
		return x.Str
	}
	return d.jsonText(*x)
}

// withoutURLKeys drops, at every depth (arrays included), object members
// whose key ends in "_url". Unchanged sub-trees are shared, not copied.
func withoutURLKeys(v event.Value) event.Value {
	if v.Kind != event.Object && v.Kind != event.Array {
		return v
	}
	var out []event.Value
	for i := range v.Kids {
		k := &v.Kids[i]
		drop := v.Kind == event.Object && strings.HasSuffix(k.Key, "_url")
		nk := *k
		if !drop {
			nk = withoutURLKeys(*k)
		}
		changed := drop || (len(nk.Kids) > 0 && &nk.Kids[0] != &k.Kids[0])
		if out == nil && changed {
			out = make([]event.Value, i, len(v.Kids))
			copy(out, v.Kids[:i])
		}
		if out != nil && !drop {
			out = append(out, nk)
		}
	}
	if out != nil {
		v.Kids = out
	}
	return v
}

// cloudflareLines decodes Cloudflare Logpush NDJSON: each line that is a
// JSON object becomes {"timestamp": <EdgeStartTimestamp>, "event_message":
// <the line>, "metadata": <the object>}; other lines are skipped and counted.
func (d *Decoder) cloudflareLines(body []byte) (skipped int) {
	event.EachLine(body, func(_, _ int, line []byte) bool {
		v, err := d.parser.Parse(line)
		if err != nil || v.Kind != event.Object {
			skipped++
			return true
		}
		members := make([]event.Value, 0, 3)
		if ts := v.Get("EdgeStartTimestamp"); ts != nil {
			members = append(members, event.Member("timestamp", *ts))
		}
		members = append(members,
			event.Member("event_message", event.StringValue(aliasString(line))),
			event.Member("metadata", v))
		d.events = append(d.events, event.ObjectValue(members...))
		return true
	})
	return skipped
}

// mergeCloudEvent adds the CloudEvents headers to every event: each ce-*
// header becomes a member of "cloud_event" (prefix stripped, lower-cased,
// '-' → '_'), and ce-time, when present, becomes the event's "timestamp".
func (d *Decoder) mergeCloudEvent(headers func(yield func([]byte, []byte) bool)) {
	if headers == nil {
		return
	}
	var ce []event.Value
	ceTime, hasTime := "", false
	for name, value := range headers {
		if len(name) < 3 || !strings.EqualFold(string(name[:3]), "ce-") {
			continue
		}
		key := strings.Map(func(r rune) rune {
			if r == '-' {
				return '_'
			}
			return r
		}, strings.ToLower(string(name[3:])))
		// Header buffers are reused by the server: copy the value.
		m := event.Member(key, event.StringValue(string(value)))
		ce = append(ce, m)
		if key == "time" {
			ceTime, hasTime = m.Str, true
		}
	}
	if len(ce) == 0 {
		return
	}
	cloudEvent := event.ObjectValue(ce...)
	for i := range d.events {
		ev := &d.events[i]
		kids := make([]event.Value, 0, len(ev.Kids)+2)
		for _, m := range ev.Kids {
			if m.Key != "cloud_event" && (!hasTime || m.Key != "timestamp") {
				kids = append(kids, m)
			}
		}
		kids = append(kids, event.Member("cloud_event", cloudEvent))
		if hasTime {
			kids = append(kids, event.Member("timestamp", event.StringValue(ceTime)))
		}
		ev.Kids = kids
	}
}

// aliasString returns b as a string without copying; b must not change while
// the string is in use (it is the request body or the Decoder's buffer).
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
