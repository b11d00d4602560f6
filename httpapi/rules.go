package httpapi

import (
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/lql"
)

// sourceRules are a source's ingest-time rules, compiled once per version
// of the source (docs/compat/logflare.md §4.8).
type sourceRules struct {
	// drop matches events to discard (drop_lql_string); nil drops none.
	drop *lql.Matcher
	// messageKeys are the field paths custom_event_message_keys joins into
	// event_message; empty leaves the message alone.
	messageKeys [][]string
}

// ruleCache maps a *catalog.Source (immutable: each change makes a new
// one) to its compiled rules.
type ruleCache struct{ m sync.Map }

// get returns src's rules, compiling them on first use. A drop filter that
// no longer compiles (it was validated when saved) is logged and ignored.
func (c *ruleCache) get(cat *catalog.Catalog, src *catalog.Source, log *slog.Logger) *sourceRules {
	if v, ok := c.m.Load(src); ok {
		return v.(*sourceRules)
	}
	r := &sourceRules{messageKeys: parseMessageKeys(src.CustomEventMessageKeys)}
	if src.DropLQL != "" {
		m, err := cat.CompileDropLQL(src.DropLQL)
		if err != nil {
			log.Warn("source drop_lql_string does not compile; dropping nothing", "source_id", src.ID, "err", err)
		} else {
			r.drop = m
		}
	}
	v, _ := c.m.LoadOrStore(src, r)
	return v.(*sourceRules)
}

// forget drops the rules of a source version that was replaced or deleted.
func (c *ruleCache) forget(src *catalog.Source) { c.m.Delete(src) }

// parseMessageKeys splits a custom_event_message_keys list ("m.user.id,
// level") into field paths; `m.` stands for `metadata.`.
func parseMessageKeys(list string) [][]string {
	var out [][]string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(k, "m."); ok {
			k = "metadata." + rest
		}
		out = append(out, strings.Split(k, "."))
	}
	return out
}

// applyMessageKeys sets ev's message to the values at r.messageKeys joined
// by " | ": strings as they are, other values as JSON, missing ones empty.
// buf is scratch space, returned for reuse.
func (r *sourceRules) applyMessageKeys(ev *event.Event, buf []byte) []byte {
	for i, path := range r.messageKeys {
		if i > 0 {
			buf = append(buf, " | "...)
		}
		buf = appendFieldText(buf, ev, path)
	}
	ev.Message, ev.HasMessage = string(buf), true
	return buf
}

// appendFieldText appends the text of the value at path in ev.
func appendFieldText(dst []byte, ev *event.Event, path []string) []byte {
	if len(path) == 1 {
		switch path[0] {
		case "event_message", "message":
			return append(dst, ev.Message...)
		case "id":
			return append(dst, ev.ID...)
		case "timestamp":
			return strconv.AppendInt(dst, ev.Timestamp, 10)
		}
	}
	v := ev.Fields.Path(path...)
	switch {
	case v == nil || v.Kind == event.Null:
		return dst
	case v.Kind == event.String:
		return append(dst, v.Str...)
	}
	return event.AppendJSON(dst, *v)
}
