package endpoints

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/sql"
)

func ptr[T any](v T) *T { return &v }

// localFixture is a service over a source "app" of 6 events and an
// endpoint "app.errors" whose CTE selects the events of a level.
func localFixture(t *testing.T) *Service {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.Open(dir, &engine.Options{DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := cat.CreateSource(catalog.SourceParams{Name: ptr("app")})
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i := range 6 {
		evs = append(evs, event.Event{
			ID: fmt.Sprintf("id-%d", i), Timestamp: 1752148800000000 + int64(i)*1000000,
			Message: fmt.Sprintf("m%d", i), HasMessage: true,
			Fields: event.ObjectValue(
				event.Member("project", event.StringValue("p")),
				event.Member("metadata", event.ObjectValue(event.Member("level", event.StringValue([]string{"info", "error"}[i%2])))),
			),
		})
	}
	sh, err := eng.Shard(src.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	_, err = cat.CreateEndpoint(catalog.EndpointParams{Name: ptr("app.errors"),
		Query: ptr("with picked as (select t.id, t.timestamp, t.event_message, m.level from app t cross join unnest(t.metadata) m where m.level = @level) select id from picked")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateEndpoint(catalog.EndpointParams{Name: ptr("flat"), Query: ptr("select id from app")}); err != nil {
		t.Fatal(err)
	}
	s := New(eng, cat, &Options{DisableBackground: true})
	t.Cleanup(s.Close)
	return s
}

// cells renders a result as "name=value" rows.
func cells(res *sql.Result) []string {
	var out []string
	for r := range res.Len {
		var row []string
		for c := range res.Cols {
			row = append(row, res.Names[c]+"="+sql.CellJSON(res, c, r))
		}
		out = append(out, strings.Join(row, " "))
	}
	return out
}

// TestQueryLocalStar: the local tool expands * into the columns it names,
// where the endpoint rules refuse it.
func TestQueryLocalStar(t *testing.T) {
	s := localFixture(t)
	ctx := context.Background()
	if _, err := s.Query(ctx, "select * from app", nil, 10); err == nil || !strings.Contains(err.Error(), "wildcard") {
		t.Fatalf("the endpoint rules must still refuse *: %v", err)
	}
	for q, want := range map[string]string{
		"select * from app order by timestamp limit 1":                                           `timestamp=1752148800000000 id=id-0 event_message=m0 metadata=[{"level":"info"}] project=p`,
		"select * except (metadata, project) from app order by timestamp limit 1":                `timestamp=1752148800000000 id=id-0 event_message=m0`,
		"select t.* except (metadata) from app t where t.id = 'id-3'":                            `timestamp=1752148803000000 id=id-3 event_message=m3 project=p`,
		"with x as (select id, event_message as msg from app) select * from x where id = 'id-5'": `id=id-5 msg=m5`,
		"select * from (select id from app where id = 'id-1') s":                                 `id=id-1`,
		"select count(*) as n from (select * from app)":                                          `n=6`,
	} {
		res, err := s.QueryLocal(ctx, q, LocalOptions{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := cells(res); len(got) == 0 || got[0] != want {
			t.Fatalf("%s:\n got %q\nwant %q", q, got, want)
		}
	}
	for _, q := range []string{"select * from nope", "select x.* from app t", "delete from app", "select 1; select 2"} {
		if _, err := s.QueryLocal(ctx, q, LocalOptions{}); err == nil {
			t.Errorf("%s: no error", q)
		}
	}
}

// TestQueryLocalEndpoint: --endpoint runs the query over an endpoint's
// CTEs, with its parameters bound.
func TestQueryLocalEndpoint(t *testing.T) {
	s := localFixture(t)
	ctx := context.Background()
	res, err := s.QueryLocal(ctx, "select * from picked order by timestamp", LocalOptions{Endpoint: "app.errors", Params: map[string]string{"level": "error"}})
	if err != nil {
		t.Fatal(err)
	}
	got := cells(res)
	if len(got) != 3 || got[0] != `id=id-1 timestamp=1752148801000000 event_message=m1 level=error` {
		t.Fatalf("%q", got)
	}
	res, err = s.QueryLocal(ctx, "select count(*) as n from picked", LocalOptions{Endpoint: "app.errors", Params: map[string]string{"level": "info"}})
	if err != nil || cells(res)[0] != "n=3" {
		t.Fatalf("%v %v", cells(res), err)
	}
	if plan, err := s.ExplainLocal("select * from picked", LocalOptions{Endpoint: "app.errors", Params: map[string]string{"level": "x"}}); err != nil || plan == "" {
		t.Fatalf("explain: %q %v", plan, err)
	}
	if _, err := s.QueryLocal(ctx, "select * from picked", LocalOptions{Endpoint: "flat"}); err == nil || !strings.Contains(err.Error(), "no WITH") {
		t.Fatalf("an endpoint without CTEs: %v", err)
	}
	if _, err := s.QueryLocal(ctx, "select 1", LocalOptions{Endpoint: "missing"}); err == nil {
		t.Fatal("an unknown endpoint")
	}
}
