package parser

import "strings"

// Sandboxed is the result of merging a consumer query into a sandboxable
// endpoint query.
type Sandboxed struct {
	// Query is the query to run: the endpoint's WITH clause followed by the
	// consumer's query. Its table names are resolved. Nodes keep the
	// positions of the text they came from (endpoint or consumer).
	Query *Query
	// Declared are the endpoint query's parameters (Parameters of the
	// endpoint query). Only these are bound from the request; a parameter
	// that appears only in the consumer query is not declared.
	Declared []string
}

// Sandbox merges consumerSQL (Logflare's `sql=` request parameter) into the
// sandboxable endpoint query endpointSQL, the way Logflare does:
//
//   - the endpoint query is validated as by Validate (its errors are
//     returned as they are) and must have a WITH clause, else
//     KindSandboxNoWith (Logflare then ignores the consumer query and runs
//     the endpoint query; the caller decides);
//   - the consumer query must be one statement and a query:
//     "Only SELECT queries allowed in sandboxed queries",
//     "Only singular query allowed" (an empty one is "Query cannot be empty");
//   - it is checked for restricted functions and wildcards as by Validate;
//   - every table it reads must be one of the endpoint's CTEs or a CTE the
//     consumer defines in scope. A name that is not even a known source is
//     "can't find source <name>"; a known source that is not a CTE is
//     "Table not found in CTE: (<names>)" (all such names, comma separated);
//   - the consumer replaces the endpoint's final query body, ORDER BY, LIMIT
//     and OFFSET. A consumer with its own WITH becomes a nested query,
//     `WITH <endpoint ctes> (WITH <consumer ctes> SELECT ...)`, so its CTEs
//     form an inner scope that can read (and shadow) the endpoint's.
//
// Subqueries, UNNEST, joins, set operations, ORDER BY and LIMIT are allowed
// in the consumer query.
func Sandbox(endpointSQL, consumerSQL string, opts ValidateOptions) (*Sandboxed, error) {
	endpoint, err := Validate(endpointSQL, opts)
	if err != nil {
		return nil, err
	}
	if endpoint.With == nil {
		return nil, &ValidationError{Kind: KindSandboxNoWith, Pos: endpoint.At}
	}
	stmts, err := ParseStatements(consumerSQL)
	if err != nil {
		return nil, err
	}
	consumer, err := singleQuery(stmts, KindSandboxNotSelect)
	if err != nil {
		return nil, err
	}
	if err := checkFunctionsAndWildcards(consumer); err != nil {
		return nil, err
	}

	// The consumer sees the endpoint's top-level CTEs as its outer scope.
	var notCTE []string
	r := resolver{unresolved: func(t *TableName) *ValidationError {
		name := t.Name()
		if !opts.known(name) {
			return &ValidationError{Kind: KindUnknownSource, Name: name, Pos: t.At}
		}
		t.Ref = RefSource
		for _, n := range notCTE {
			if n == name {
				return nil
			}
		}
		notCTE = append(notCTE, name)
		return nil
	}}
	if err := r.query(consumer, &scope{ctes: endpoint.With.CTEs}); err != nil {
		return nil, err
	}
	if len(notCTE) > 0 {
		return nil, &ValidationError{Kind: KindSandboxTableNotInCTE, Name: strings.Join(notCTE, ", ")}
	}

	merged := &Query{At: endpoint.At, With: endpoint.With}
	if consumer.With != nil {
		merged.Body = consumer
	} else {
		merged.Body = consumer.Body
		merged.OrderBy = consumer.OrderBy
		merged.Limit = consumer.Limit
		merged.Offset = consumer.Offset
	}
	return &Sandboxed{Query: merged, Declared: Parameters(endpoint)}, nil
}
