package httpapi

// ServerCondition is something wrong with the server as a whole that GET
// /ready reports (Options.ServerConditions): the server still serves, so
// it stays ready (200) and says "degraded", as for a degraded source.
type ServerCondition struct {
	// Kind names the condition, e.g. "object_store_unavailable".
	Kind string `json:"kind"`
	// Detail says what is wrong and what it affects.
	Detail string `json:"detail"`
	// Since is when it began (RFC 3339, UTC).
	Since string `json:"since"`
	// Count is how many times it happened since it began.
	Count int64 `json:"count"`
}
