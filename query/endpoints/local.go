package endpoints

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// LocalOptions configure QueryLocal and ExplainLocal.
type LocalOptions struct {
	// Params binds @parameters.
	Params map[string]string
	// MaxRows caps the rows returned (0: 1000).
	MaxRows int
	// Endpoint, when set, names a query endpoint (by name or token) whose
	// WITH clause the query runs under: its CTEs are tables of the query,
	// as for a sandboxed consumer query, but without the sandbox's rules
	// and whether or not the endpoint is sandboxable.
	Endpoint string
}

// QueryLocal runs SQL for a local, read-only tool (`sediment query`): the
// rules that guard endpoints from their consumers do not apply. A `*` or
// `t.*` in a select list (with EXCEPT) is expanded to the columns of what
// it names: a source's top-level fields (timestamp, id, event_message
// first, then by name), or a CTE's or subquery's output columns. Stars in
// subqueries inside expressions are not expanded. The other rules stay:
// one SELECT statement, no restricted function, known sources only.
func (s *Service) QueryLocal(ctx context.Context, q string, o LocalOptions) (*sql.Result, error) {
	qc := &queryCatalog{s: s, snaps: map[string]*engine.Snapshot{}}
	defer qc.release()
	pq, err := s.prepareLocal(q, o, qc)
	if err != nil {
		return nil, err
	}
	return sql.Run(ctx, pq, qc, sql.Options{
		Params:             o.Params,
		Now:                s.opts.Now(),
		MaxRows:            localMaxRows(o),
		MemoryLimit:        s.opts.QueryMemory,
		MemoryLimitSetting: s.opts.QueryMemorySetting,
		MemoryPool:         s.opts.QueryMemoryPool,
		Timeout:            s.opts.QueryTimeout,
		Workers:            runtime.GOMAXPROCS(0),
	})
}

// ExplainLocal is QueryLocal's optimised plan, as an indented tree.
func (s *Service) ExplainLocal(q string, o LocalOptions) (string, error) {
	qc := &queryCatalog{s: s, snaps: map[string]*engine.Snapshot{}}
	defer qc.release()
	pq, err := s.prepareLocal(q, o, qc)
	if err != nil {
		return "", err
	}
	n, err := sql.Plan(pq, qc, sql.Options{Params: o.Params, Now: s.opts.Now(), MaxRows: localMaxRows(o)})
	if err != nil {
		return "", err
	}
	return sql.Explain(n), nil
}

func localMaxRows(o LocalOptions) int {
	if o.MaxRows <= 0 {
		return 1000
	}
	return o.MaxRows
}

// prepareLocal parses q, puts it under the endpoint's WITH clause when
// asked, expands its stars and validates it.
func (s *Service) prepareLocal(q string, o LocalOptions, qc *queryCatalog) (*parser.Query, error) {
	stmts, err := parser.ParseStatements(q)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, errors.New("one SELECT statement, please")
	}
	pq, ok := stmts[0].(*parser.Query)
	if !ok {
		return nil, errors.New("Only SELECT queries allowed")
	}
	if o.Endpoint != "" {
		if pq, err = s.underEndpoint(pq, o.Endpoint); err != nil {
			return nil, err
		}
	}
	x := starExpander{columns: func(source string) ([]string, error) {
		if !s.cat.HasSourceName(source) {
			return nil, fmt.Errorf("can't find source %s", source)
		}
		tbl, err := qc.Table(source)
		if err != nil {
			return nil, err
		}
		return topLevelColumns(tbl.Schema().Fields), nil
	}}
	if _, err := x.query(pq, nil); err != nil {
		return nil, err
	}
	if err := parser.ValidateQuery(pq, parser.ValidateOptions{KnownSource: s.cat.HasSourceName}); err != nil {
		return nil, err
	}
	return pq, nil
}

// underEndpoint puts a consumer query under an endpoint's WITH clause, as
// parser.Sandbox merges them.
func (s *Service) underEndpoint(consumer *parser.Query, name string) (*parser.Query, error) {
	ep := s.cat.EndpointByName(name)
	if ep == nil {
		if tok, ok := catalog.CanonicalToken(name); ok {
			ep = s.cat.EndpointByToken(tok)
		}
	}
	if ep == nil {
		return nil, fmt.Errorf("no endpoint named %q", name)
	}
	base, err := s.endpointSQL(ep)
	if err != nil {
		return nil, err
	}
	endpoint, err := parser.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", ep.Name, err)
	}
	if endpoint.With == nil {
		return nil, fmt.Errorf("endpoint %s has no WITH clause: there are no CTEs to query", ep.Name)
	}
	merged := &parser.Query{At: endpoint.At, With: endpoint.With}
	if consumer.With != nil {
		merged.Body = consumer
	} else {
		merged.Body, merged.OrderBy, merged.Limit, merged.Offset = consumer.Body, consumer.OrderBy, consumer.Limit, consumer.Offset
	}
	return merged, nil
}

// topLevelColumns returns the top-level field names of a schema:
// timestamp, id and event_message first, then the others by name.
func topLevelColumns(fields map[string]*scan.Field) []string {
	seen := map[string]bool{}
	for path := range fields {
		name, _, _ := strings.Cut(path, ".")
		seen[name] = true
	}
	var out []string
	for _, base := range []string{"timestamp", "id", "event_message"} {
		if seen[base] {
			out = append(out, base)
			delete(seen, base)
		}
	}
	rest := make([]string, 0, len(seen))
	for n := range seen {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	return append(out, rest...)
}
