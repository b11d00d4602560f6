package event

// DefaultMaxFields is the usual cap on the fields of one event (the default
// of VictoriaLogs' -insert.maxFieldsPerLine and of Elasticsearch's
// index.mapping.total_fields.limit).
const DefaultMaxFields = 1000

// CountFields returns the number of fields of v, an event's Fields: every
// member of an object at any depth counts once, objects included; an array
// counts as one field, whatever its elements hold. {"a":{"b":1,"c":[{"d":2}]}}
// has three fields: a, a.b and a.c. This is the number of columns the event
// needs besides timestamp, id and event_message.
func CountFields(v Value) int {
	n := 0
	for i := range v.Kids {
		n++
		if v.Kids[i].Kind == Object {
			n += CountFields(v.Kids[i])
		}
	}
	return n
}

// CapFields keeps the first max fields of fields (an event's Fields, an
// object) and returns the result with the number of fields left out.
//
// The order is the event's own, depth first: the members in the order the
// event has them (the order they were sent in), each object member followed
// by its own members before its next sibling; that is the order in which the
// keys appear in the JSON text. Fields are counted as CountFields counts
// them; an object whose members were all left out is left out too (and
// counted), so the result never holds an empty object.
//
// fields is not modified: the objects on the path to the cut are copied,
// everything else is shared. When nothing is cut, fields is returned as is.
// max <= 0 keeps no field.
func CapFields(fields Value, max int) (Value, int) {
	if fields.Kind != Object {
		return fields, 0
	}
	kids, _, changed := capMembers(fields.Kids, max)
	if !changed {
		return fields, 0
	}
	kept := CountFields(Value{Kind: Object, Kids: kids})
	dropped := CountFields(fields) - kept
	fields.Kids = kids
	return fields, dropped
}

// capMembers keeps members of kids in depth-first order while budget lasts.
// It returns the kept members, the budget left and whether anything was
// cut (the slice is then new or a shorter view of kids).
func capMembers(kids []Value, budget int) ([]Value, int, bool) {
	for i := range kids {
		if budget <= 0 {
			return kids[:i:i], 0, true
		}
		budget--
		if kids[i].Kind != Object {
			continue
		}
		sub, left, changed := capMembers(kids[i].Kids, budget)
		if !changed {
			budget = left
			continue
		}
		// The cut is inside this member: nothing after it is kept.
		out := make([]Value, i, i+1)
		copy(out, kids[:i])
		if len(sub) > 0 {
			m := kids[i]
			m.Kids = sub
			out = append(out, m)
		}
		return out, 0, true
	}
	return kids, budget, false
}
