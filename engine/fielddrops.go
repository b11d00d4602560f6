package engine

import "github.com/sediment/sediment/segment"

// FieldDrops counts, since the shard opened, the fields of accepted events
// that were not stored. Events themselves are never dropped for their
// fields.
type FieldDrops struct {
	// EventsOverCap is the number of events that had more fields than
	// Options.MaxEventFields; FieldsOverCap the fields they lost (each kept
	// its first MaxEventFields, see event.CapFields).
	EventsOverCap int64
	FieldsOverCap int64
	// Unstorable is the number of values whose path is longer than a
	// segment allows (segment.MaxPathLen bytes), or that one event alone
	// needed beyond Options.MaxColumns (not possible while MaxEventFields
	// is within its bound).
	Unstorable int64
}

// FieldDrops returns the shard's counts of fields not stored. It is cheap
// (three atomic loads), for status pages and metrics.
func (s *Shard) FieldDrops() FieldDrops {
	return FieldDrops{
		EventsOverCap: s.stats.eventsOverFieldCap.Load(),
		FieldsOverCap: s.stats.fieldsOverEventCap.Load(),
		Unstorable:    s.stats.droppedFields.Load(),
	}
}

// countEventFieldCap counts events that Append cut to MaxEventFields,
// logging the first of the shard at warn level.
func (s *Shard) countEventFieldCap(cut, lost int64, firstID string) {
	s.stats.fieldsOverEventCap.Add(lost)
	if s.stats.eventsOverFieldCap.Add(cut) != cut {
		return
	}
	s.opts.Logger.Warn("event has more fields than the per-event cap; its first fields were stored, the rest counted (further cases are only counted)",
		"shard", s.id, "max_event_fields", s.opts.MaxEventFields, "event_id", firstID, "fields_not_stored", lost)
}

// countDroppedFields counts values that could not be stored, logging the
// first of the shard at warn level.
func (s *Shard) countDroppedFields(n int64) {
	if n <= 0 || s.stats.droppedFields.Add(n) != n {
		return
	}
	s.opts.Logger.Warn("fields not stored: their path is longer than a segment allows (further cases are only counted)",
		"shard", s.id, "max_path_bytes", segment.MaxPathLen, "fields", n)
}
